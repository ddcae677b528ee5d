#!/usr/bin/env python3
"""Sort a controller's perf samples into subsystems, by what their stacks hold.

  python3 bench/perfcat.py DIR/*.data   (perf record -g of `drover controller`,
  e.g. bench/heldflat.sh PERF=DIR; needs an unstripped drover)

One line per file: the sample count and each subsystem's share. A sample goes
to the first subsystem whose marker appears anywhere in its stack, in the
order below (the collector and the snapshot first: they run beside the
requests; the local transport before the service it calls).
"""
import collections
import subprocess
import sys

SUBSYSTEMS = [
    ("gc-mark", ["gcBgMarkWorker", "gcDrain", "markroot", "scanobject"]),
    ("snapshot", ["WriteSnapshot", "(*snapshot).Persist"]),
    ("purge", ["(*Controller).purge"]),
    ("sqlite/acct", ["sqlstore", "modernc.org/sqlite", "internal/acct"]),
    ("localapi", ["localapi", "localwire"]),
    ("service", ["service.(*Service)"]),
    ("fsm-apply", ["fsm.(*FSM)", "internal/state"]),
    ("raft-wal", ["raft-wal", "raftwal", "raftnode.(*zeroVFS"]),
    ("raft", ["hashicorp/raft"]),
    ("controller", ["internal/controller"]),
    ("go-scheduler", ["findRunnable", "runtime.schedule", "stopm", "notewakeup", "futex"]),
    ("sysmon", ["sysmon"]),
]


def subsystem(stack):
    text = "\n".join(stack)
    for name, markers in SUBSYSTEMS:
        if any(m in text for m in markers):
            return name
    return "other"


def main(paths):
    for path in paths:
        out = subprocess.run(["perf", "script", "-i", path, "-F", "ip,sym"],
                             capture_output=True, text=True, check=False).stdout
        counts, stack = collections.Counter(), []
        for line in out.split("\n") + [""]:
            if line.strip():
                stack.append(line.strip())
            elif stack:
                counts[subsystem(stack)] += 1
                stack = []
        total = sum(counts.values()) or 1
        shares = " ".join(f"{k}={100 * v / total:.1f}%" for k, v in counts.most_common())
        print(f"{path}: {sum(counts.values())} samples: {shares}")


if __name__ == "__main__":
    main(sys.argv[1:])
