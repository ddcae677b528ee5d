#!/usr/bin/env python3
# cmdtime.py N: runs each command of stdin ("label<TAB>VAR=v;...<TAB>command") N times, alternated
# round by round after 3 warm-up rounds, and prints the median wall time and the child's CPU (user+sys).
import os, subprocess, sys, time, resource, statistics
N=int(sys.argv[1]); pairs=[]
for line in sys.stdin:
    label, env, cmd = line.rstrip("\n").split("\t")
    e=dict(os.environ)
    for kv in filter(None, env.split(";")):
        k,v=kv.split("=",1); e[k]=v
    pairs.append((label, e, cmd.split()))
res={p[0]:([],[]) for p in pairs}
for i in range(N+3):
    for label,e,cmd in pairs:
        r0=resource.getrusage(resource.RUSAGE_CHILDREN); t0=time.perf_counter()
        subprocess.run(cmd, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        t1=time.perf_counter(); r1=resource.getrusage(resource.RUSAGE_CHILDREN)
        if i>=3:
            res[label][0].append((t1-t0)*1000); res[label][1].append((r1.ru_utime+r1.ru_stime-r0.ru_utime-r0.ru_stime)*1000)
for label,(w,c) in res.items():
    print(f"{label:45s} wall median {statistics.median(w):6.2f} ms  cpu median {statistics.median(c):6.2f} ms  (n={len(w)})")
