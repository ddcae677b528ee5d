package auth

import (
	"crypto/subtle"
	"errors"
	"os/user"
	"strconv"
	"sync"

	"github.com/drover-hpc/drover/internal/api"
)

// Identity is a verified caller: api's, so that adapters hand the
// verifier's answer to the service as it is.
type Identity = api.Identity

// NoUID is the uid of a caller that is no user: a node certificate.
const NoUID = api.NoUID

// ErrDenied is Slurm's wording for refused access.
var ErrDenied = errors.New("Access/permission denied")

// Cluster is the identity of a caller holding the cluster token: root's
// rights.
func Cluster() *Identity { return &Identity{UID: 0, GID: 0, User: "root", Cluster: true} }

// NodeIdentity is the identity of a caller presenting node's certificate:
// no user, only that node.
func NodeIdentity(node string) *Identity {
	return &Identity{UID: NoUID, GID: NoUID, User: NodeCNPrefix + node, Node: node}
}

// TokenMatches reports whether presented is the cluster token (in
// constant time; an empty token matches nothing).
func TokenMatches(token, presented string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(presented), []byte(token)) == 1
}

type userInfo struct {
	name   string
	groups []uint32
}

// Users resolves local callers' uids to identities; the zero value is
// ready. Lookups are cached: the account database rarely changes while a
// daemon runs.
type Users struct {
	cache sync.Map // uid -> *userInfo
}

// Local is the identity of a local caller whose uid and gid the kernel
// vouched for (SO_PEERCRED): its name and supplementary groups looked up.
func (us *Users) Local(uid, gid uint32) *Identity {
	u := us.lookup(uid)
	return &Identity{UID: uid, GID: gid, Groups: u.groups, User: u.name}
}

// lookup resolves a uid's name and supplementary groups (cached).
func (us *Users) lookup(uid uint32) *userInfo {
	if u, ok := us.cache.Load(uid); ok {
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
	us.cache.Store(uid, ui)
	return ui
}
