package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/drover-hpc/drover/internal/api"
)

// PeerInfo is the AuthInfo a connection carries after the handshake.
type PeerInfo struct {
	credentials.CommonAuthInfo
	Local    bool // came through the Unix socket; UID/GID are the kernel's word
	UID, GID uint32
	PID      int32
}

// AuthType names the mechanism.
func (PeerInfo) AuthType() string { return "peercred" }

// PeerCreds is server-side gRPC transport credentials that read the
// caller's uid/gid from a Unix socket; TCP connections go through TLS when
// TLS is set (the controller's port: server certificate from the cluster
// CA, node certificates optional), else pass through unauthenticated.
// Either way a TCP call must carry the cluster token or come from a node
// certificate.
type PeerCreds struct {
	TLS credentials.TransportCredentials
}

// ServerHandshake reads SO_PEERCRED from Unix connections.
func (p PeerCreds) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	info := PeerInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}
	uc, ok := c.(*net.UnixConn)
	if w, isWrapped := c.(interface{ Unix() *net.UnixConn }); !ok && isWrapped {
		// A listener's wrapper (a per-user count) around a Unix socket.
		uc, ok = w.Unix(), true
	}
	if !ok {
		if p.TLS != nil {
			return p.TLS.ServerHandshake(c)
		}
		return c, info, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, nil, err
	}
	if serr != nil {
		return nil, nil, fmt.Errorf("SO_PEERCRED: %w", serr)
	}
	info.Local, info.UID, info.GID, info.PID = true, cred.Uid, cred.Gid, cred.Pid
	info.SecurityLevel = credentials.PrivacyAndIntegrity // the kernel vouches for a local socket
	return c, info, nil
}

// ClientHandshake is unused: clients dial with insecure credentials.
func (PeerCreds) ClientHandshake(_ context.Context, _ string, c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return c, PeerInfo{}, nil
}

func (PeerCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}
func (p PeerCreds) Clone() credentials.TransportCredentials { return p }
func (PeerCreds) OverrideServerName(string) error           { return nil }

// Identity is a verified caller: api's, so that adapters hand the
// verifier's answer to the service as it is.
type Identity = api.Identity

// NoUID is the uid of a caller that is no user: a node certificate.
const NoUID = api.NoUID

// ErrDenied is Slurm's wording for refused access.
var ErrDenied = errors.New("Access/permission denied")

// Verifier turns a call's context into an Identity.
type Verifier struct {
	token string
	users sync.Map // uid -> *userInfo
}

// NewVerifier accepts the given cluster token on TCP calls.
func NewVerifier(token string) *Verifier { return &Verifier{token: token} }

// Identify returns the caller's identity or ErrDenied.
func (v *Verifier) Identify(ctx context.Context) (*Identity, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil, ErrDenied
	}
	if info, ok := p.AuthInfo.(PeerInfo); ok && info.Local {
		u := v.lookup(info.UID)
		return &Identity{UID: info.UID, GID: info.GID, Groups: u.groups, User: u.name}, nil
	}
	if tlsInfo, ok := p.AuthInfo.(credentials.TLSInfo); ok {
		if node, ok := NodeOf(&tlsInfo.State); ok {
			return &Identity{UID: NoUID, GID: NoUID, User: NodeCNPrefix + node, Node: node}, nil
		}
	}
	if v.CheckToken(ctx) {
		return &Identity{UID: 0, GID: 0, User: "root", Cluster: true}, nil
	}
	return nil, ErrDenied
}

// CheckToken reports whether the call carries the cluster token.
func (v *Verifier) CheckToken(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, h := range md.Get("authorization") {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if ok && v.token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(v.token)) == 1 {
			return true
		}
	}
	return false
}

type userInfo struct {
	name   string
	groups []uint32
}

// lookup resolves a uid's name and supplementary groups (cached; the
// account database rarely changes while a controller runs).
func (v *Verifier) lookup(uid uint32) *userInfo {
	if u, ok := v.users.Load(uid); ok {
		return u.(*userInfo)
	}
	ui := &userInfo{name: strconv.FormatUint(uint64(uid), 10)}
	if u, err := user.LookupId(ui.name); err == nil {
		ui.name = u.Username
		if gids, err := u.GroupIds(); err == nil {
			for _, g := range gids {
				if n, err := strconv.ParseUint(g, 10, 32); err == nil {
					ui.groups = append(ui.groups, uint32(n))
				}
			}
		}
	}
	v.users.Store(uid, ui)
	return ui
}

// TokenCreds attaches the cluster token to every call of a client.
type TokenCreds string

func (t TokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}
func (TokenCreds) RequireTransportSecurity() bool { return false }

// LoadOrCreateToken reads the cluster token at path, creating a random one
// (mode 0600) when the file does not exist.
func LoadOrCreateToken(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(buf)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}

// ReadToken reads an existing token file.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read cluster token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
