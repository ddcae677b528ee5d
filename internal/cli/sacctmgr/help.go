package sacctmgr

const helpText = `sacctmgr [<OPTION>] [<COMMAND>]
    Manage the accounting configuration: clusters, accounts, users, their
    associations (and limits) and QOS. Without a command, commands are
    read from stdin, one a line.

  <OPTION>:
    -h, --help          show this help (also the "help" command)
    -i, --immediate     commit changes without asking first
    -n, --noheader      print listings without their header lines
    -o, --oneliner      accepted; listings are one line a record anyway
    -p, --parsable      separate fields with '|', one after the last too
    -P, --parsable2     separate fields with '|', none after the last
    -Q, --quiet         print errors only (also the "quiet" command)
    -r, --readonly      refuse add, modify and delete
    -s, --associations  list users and accounts with their associations
    -v, --verbose       say more (also the "verbose" command)
    -V, --version       print the version (also the "version" command)

  <COMMAND>:
    add|create ENTITY NAME... [SPEC...]
    modify|update ENTITY [where SPEC...] set SPEC...
    delete|remove ENTITY [where] SPEC...
    list|show ENTITY [NAME...] [where SPEC...] [format=FIELD[%WIDTH],...]
    exit, quit, help, version, quiet, verbose, readonly, associations

  ENTITY is account, cluster, qos or user; list also takes association
  and tres. SPEC is Key=Value; lists take Key=a,b; QOS lists and QOS
  Preempt also Key+=a and Key-=b. Keys and ENTITY words may be shortened
  and are case-insensitive; names are kept in lower case. A limit of -1
  clears it.

  Accounts:  Cluster=, Description=, Organization=, Parent= and the
             association limits below
  Users:     Account=, DefaultAccount=, AdminLevel=None|Operator|Administrator,
             Cluster=, Partition=, NewName= (modify) and the limits below
  Limits of associations (accounts, users; clusters: their root):
             Fairshare= (a number or parent), Priority=, GrpTRES=,
             GrpJobs=, GrpSubmitJobs=, GrpWall=, MaxJobs=, MaxSubmitJobs=,
             MaxTRES= (per job), MaxTRESPerNode=, MaxWall=, QOS=, DefaultQOS=
  QOS:       Description=, Priority=, Flags=, Preempt=, PreemptMode=,
             UsageFactor=, GraceTime= (seconds), GrpTRES=, GrpJobs=,
             GrpSubmitJobs=, MaxTRESPerJob=, MaxTRESPerNode=,
             MaxTRESPerUser=, MaxJobsPerUser=, MaxSubmitJobsPerUser=,
             MaxWall=
  Conditions (where) take the same keys as lists, plus Names= and, for
  listings, withassoc, tree (associations), WOPLimits and OnlyDefaults.

  TRES are written cpu=4,mem=8G,node=2,gres/gpu=1; times as minutes,
  MM:SS, HH:MM:SS or D-HH[:MM[:SS]].

`
