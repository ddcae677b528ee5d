package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
)

// JoinSecret is a join token as the admin hands it to a new machine:
// "<id>.<secret>.<CA fingerprint hex>". The id finds the token on the
// controller, the secret proves the holder, and the fingerprint lets the
// new node check that it talks to the right controller before it sends
// anything.
type JoinSecret struct {
	ID, Secret string
	CAHash     string // "sha256:<hex>"
}

// NewJoinSecret makes a fresh token for the CA with fingerprint ca.
func NewJoinSecret(ca string) JoinSecret {
	return JoinSecret{ID: randomHex(3), Secret: randomHex(12), CAHash: ca}
}

func (j JoinSecret) String() string {
	return j.ID + "." + j.Secret + "." + strings.TrimPrefix(j.CAHash, "sha256:")
}

// ParseJoinSecret reads a token as String writes it.
func ParseJoinSecret(s string) (JoinSecret, error) {
	f := strings.Split(strings.TrimSpace(s), ".")
	bad := errors.New("malformed join token (want ID.SECRET.CAHASH, as printed by `drover token create`)")
	if len(f) != 3 || len(f[0]) != 6 || len(f[1]) != 24 || len(f[2]) != 64 {
		return JoinSecret{}, bad
	}
	for _, part := range f {
		if _, err := hex.DecodeString(part); err != nil {
			return JoinSecret{}, bad
		}
	}
	return JoinSecret{ID: f[0], Secret: f[1], CAHash: "sha256:" + f[2]}, nil
}

// HashSecret is what the controller stores instead of a token's secret.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretMatches compares a presented secret with a stored hash.
func SecretMatches(secret, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(hash)) == 1
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
