package auth

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCAIssuesAndPins(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "c")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "ca.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("ca.key: %v %v", st, err)
	}
	again, err := LoadOrCreateCA(dir, "c")
	if err != nil || again.Fingerprint() != ca.Fingerprint() {
		t.Fatalf("reloaded CA differs: %v", err)
	}

	// A controller serving with a CA-issued certificate; a joining node
	// that pins the CA's fingerprint connects, one pinning another does not.
	srv, err := ca.IssueServer([]string{"127.0.0.1", "ctl"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srv},
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: ca.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nodes := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			if err := tc.Handshake(); err == nil {
				st := tc.ConnectionState()
				n, _ := NodeOf(&st)
				nodes <- n
			} else {
				nodes <- "handshake failed"
			}
			c.Close()
		}
	}()
	dial := func(cfg *tls.Config) error {
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(PinnedConfig(ca.Fingerprint())); err != nil {
		t.Fatalf("pinned dial: %v", err)
	}
	if n := <-nodes; n != "" {
		t.Errorf("anonymous client seen as node %q", n)
	}
	other, _ := LoadOrCreateCA(t.TempDir(), "other")
	if err := dial(PinnedConfig(other.Fingerprint())); err == nil || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("dial pinning another CA: %v", err)
	}
	<-nodes

	// A node certificate from a CSR names the node, whatever the CSR says.
	keyPEM, csr, err := NewNodeKey("evil")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := ca.SignNode(csr, "node7")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	if err := dial(&tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if n := <-nodes; n != "node7" {
		t.Errorf("node certificate names %q, want node7", n)
	}
	if _, err := ca.SignNode([]byte("garbage"), "x"); err == nil {
		t.Error("signed a garbage request")
	}
	block, _ := pem.Decode(certPEM)
	cert, _ := x509.ParseCertificate(block.Bytes)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a node certificate is valid for serving")
	}
}

func TestJoinSecret(t *testing.T) {
	ca := "sha256:" + strings.Repeat("ab", 32)
	s := NewJoinSecret(ca)
	got, err := ParseJoinSecret(" " + s.String() + "\n")
	if err != nil || got != s {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if !SecretMatches(s.Secret, HashSecret(s.Secret)) || SecretMatches("x"+s.Secret[1:], HashSecret(s.Secret)) {
		t.Error("secret hash comparison")
	}
	for _, bad := range []string{"", "a.b.c", s.ID + "." + s.Secret, strings.Replace(s.String(), ".", "-", 1), "zzzzzz." + s.Secret + "." + strings.Repeat("ab", 32)} {
		if _, err := ParseJoinSecret(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParseJoinSecret(f *testing.F) {
	f.Add(NewJoinSecret("sha256:" + strings.Repeat("0", 64)).String())
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, s string) {
		js, err := ParseJoinSecret(s)
		if err == nil {
			if again, err := ParseJoinSecret(js.String()); err != nil || again != js {
				t.Fatalf("round trip of %q", s)
			}
		}
	})
}
