package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"

	"golang.org/x/sys/unix"
)

// The supervisor's messages on the wire (the protocol: supervise_linux.go).

// The protocol runs over a SOCK_SEQPACKET socket: one message per packet,
// and file descriptors travel with the packet they belong to.
func dialSuper(sock string) (*net.UnixConn, error) {
	return net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: sock, Net: "unixpacket"})
}

func writeMsg(c *net.UnixConn, m *superMsg, fds ...int) error {
	// Without HTML escaping: json.Marshal writes each '<', '>' and '&'
	// of a job's environment as six bytes.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	return writePacket(c, buf.Bytes(), fds...)
}

// writeBinMsg writes m in the binary form (superbin_linux.go), for a
// peer that reads it.
func writeBinMsg(c *net.UnixConn, m *superMsg, fds ...int) error {
	return writePacket(c, encodeSuperBin(m), fds...)
}

func writePacket(c *net.UnixConn, b []byte, fds ...int) error {
	if len(b) > maxSuperMsg {
		// The reader would get it cut short, fail to parse it and end
		// the connection: every supervised job of the node lost.
		return fmt.Errorf("executor: supervisor message of %d bytes, more than %d", len(b), maxSuperMsg)
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err := c.WriteMsgUnix(b, oob, nil)
	return err
}

func readMsg(c *net.UnixConn, buf, oob []byte) (superMsg, error) {
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return superMsg{}, err
	}
	var m superMsg
	if oobn > 0 {
		if scms, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, scm := range scms {
				if fds, err := unix.ParseUnixRights(&scm); err == nil {
					m.fds = append(m.fds, fds...)
				}
			}
		}
	}
	if n == 0 {
		return m, io.EOF
	}
	if buf[0] == superBinTag {
		fds := m.fds
		m, err = decodeSuperBin(buf[:n])
		m.fds, m.bin = fds, true
	} else {
		err = json.Unmarshal(buf[:n], &m)
	}
	if err != nil {
		for _, fd := range m.fds {
			unix.Close(fd)
		}
		return superMsg{}, err
	}
	return m, nil
}

// maxSuperMsg bounds one message (a spec with a large environment).
const maxSuperMsg = 4 << 20

// roomForMessages lets c send a message of up to maxSuperMsg in one packet.
// A SOCK_SEQPACKET packet must fit the sender's socket buffer, by default
// about 200 KiB (net.core.wmem_default): a batch job with a larger
// environment, common with environment modules, failed its start with
// EMSGSIZE and ran unsupervised, to be killed and requeued by the next
// agent restart. Root may raise the buffer past net.core.wmem_max.
func roomForMessages(c *net.UnixConn) {
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		// The kernel doubles the value for its bookkeeping.
		if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, maxSuperMsg) != nil {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, maxSuperMsg)
		}
	})
}
