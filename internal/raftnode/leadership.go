package raftnode

// Leader is the address of the member that leads, "" when none is known.
// With one voter on the in-memory transport it is this member's ID.
func (n *Node) Leader() string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.inst == nil {
		return ""
	}
	addr, _ := n.inst.r.LeaderWithID()
	return string(addr)
}
