package slurmconf

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/drover-hpc/drover/internal/nss"
)

// How scontrol show config prints a key's value.
const (
	fmtPlain = iota
	fmtSec   // "300 sec"
	fmtMin   // "0 min"
	fmtUsec  // "2000 usec"
	fmtPct   // "0 percent"
	fmtRate  // "300 nodes/min"
	fmtYesNo // "Yes" / "No"
	fmtHMS   // minutes as "00:05:00"
	fmtDHMS  // minutes as "7-00:00:00"
	fmtUpper // upper-cased ("NO", "CR_CORE_MEMORY")
)

// showKey is one line of scontrol show config: its key, format and the
// value Slurm 22.05 shows when slurm.conf does not set it ("" = "(null)").
type showKey struct {
	key  string
	kind int
	def  string
}

// showKeys are the keys scontrol show config prints, in Slurm's order.
// Keys computed from other settings (ClusterName, SlurmUser, memory
// defaults, the controller hosts, ...) are filled in by ShowConfig.
var showKeys = []showKey{
	{"AccountingStorageBackupHost", fmtPlain, ""},
	{"AccountingStorageEnforce", fmtPlain, "none"},
	{"AccountingStorageHost", fmtPlain, "localhost"},
	{"AccountingStorageExternalHost", fmtPlain, ""},
	{"AccountingStorageParameters", fmtPlain, ""},
	{"AccountingStoragePort", fmtPlain, "0"},
	{"AccountingStorageTRES", fmtPlain, "cpu,mem,energy,node,billing,fs/disk,vmem,pages"},
	{"AccountingStorageType", fmtPlain, "accounting_storage/none"},
	{"AccountingStorageUser", fmtPlain, "N/A"},
	{"AccountingStoreFlags", fmtPlain, ""},
	{"AcctGatherEnergyType", fmtPlain, "acct_gather_energy/none"},
	{"AcctGatherFilesystemType", fmtPlain, "acct_gather_filesystem/none"},
	{"AcctGatherInterconnectType", fmtPlain, "acct_gather_interconnect/none"},
	{"AcctGatherNodeFreq", fmtSec, "0"},
	{"AcctGatherProfileType", fmtPlain, "acct_gather_profile/none"},
	{"AllowSpecResourcesUsage", fmtYesNo, "No"},
	{"AuthAltTypes", fmtPlain, ""},
	{"AuthAltParameters", fmtPlain, ""},
	{"AuthInfo", fmtPlain, ""},
	{"AuthType", fmtPlain, "auth/munge"},
	{"BatchStartTimeout", fmtSec, "10"},
	{"BcastExclude", fmtPlain, "/lib,/usr/lib,/lib64,/usr/lib64"},
	{"BcastParameters", fmtPlain, ""},
	{"BOOT_TIME", fmtPlain, ""},
	{"BurstBufferType", fmtPlain, ""},
	{"CliFilterPlugins", fmtPlain, ""},
	{"ClusterName", fmtPlain, ""},
	{"CommunicationParameters", fmtPlain, ""},
	{"CompleteWait", fmtSec, "0"},
	{"CoreSpecPlugin", fmtPlain, "core_spec/none"},
	{"CpuFreqDef", fmtPlain, "Unknown"},
	{"CpuFreqGovernors", fmtPlain, "OnDemand,Performance,UserSpace"},
	{"CredType", fmtPlain, "cred/munge"},
	{"DebugFlags", fmtPlain, ""},
	{"DefMem", fmtPlain, ""},
	{"DependencyParameters", fmtPlain, ""},
	{"DisableRootJobs", fmtYesNo, "No"},
	{"EioTimeout", fmtPlain, "60"},
	{"EnforcePartLimits", fmtUpper, "NO"},
	{"Epilog", fmtPlain, ""},
	{"EpilogMsgTime", fmtUsec, "2000"},
	{"EpilogSlurmctld", fmtPlain, ""},
	{"ExtSensorsType", fmtPlain, "ext_sensors/none"},
	{"ExtSensorsFreq", fmtSec, "0"},
	{"FairShareDampeningFactor", fmtPlain, "1"},
	{"FederationParameters", fmtPlain, ""},
	{"FirstJobId", fmtPlain, "1"},
	{"GetEnvTimeout", fmtSec, "2"},
	{"GresTypes", fmtPlain, ""},
	{"GpuFreqDef", fmtPlain, "high,memory=high"},
	{"GroupUpdateForce", fmtPlain, "1"},
	{"GroupUpdateTime", fmtSec, "600"},
	{"HealthCheckInterval", fmtSec, "0"},
	{"HealthCheckNodeState", fmtUpper, "ANY"},
	{"HealthCheckProgram", fmtPlain, ""},
	{"InactiveLimit", fmtSec, "0"},
	{"InteractiveStepOptions", fmtPlain, "--interactive --preserve-env --pty $SHELL"},
	{"JobAcctGatherFrequency", fmtPlain, "30"},
	{"JobAcctGatherType", fmtPlain, "jobacct_gather/none"},
	{"JobAcctGatherParams", fmtPlain, ""},
	{"JobCompHost", fmtPlain, "localhost"},
	{"JobCompLoc", fmtPlain, "/var/log/slurm_jobcomp.log"},
	{"JobCompPort", fmtPlain, "0"},
	{"JobCompType", fmtPlain, "jobcomp/none"},
	{"JobCompUser", fmtPlain, "root"},
	{"JobContainerType", fmtPlain, "job_container/none"},
	{"JobCredentialPrivateKey", fmtPlain, ""},
	{"JobCredentialPublicCertificate", fmtPlain, ""},
	{"JobDefaults", fmtPlain, ""},
	{"JobFileAppend", fmtPlain, "0"},
	{"JobRequeue", fmtPlain, "1"},
	{"JobSubmitPlugins", fmtPlain, ""},
	{"KillOnBadExit", fmtPlain, "0"},
	{"KillWait", fmtSec, "30"},
	{"LaunchParameters", fmtPlain, ""},
	{"LaunchType", fmtPlain, "launch/slurm"},
	{"Licenses", fmtPlain, ""},
	{"LogTimeFormat", fmtPlain, "iso8601_ms"},
	{"MailDomain", fmtPlain, ""},
	{"MailProg", fmtPlain, "/bin/mail"},
	{"MaxArraySize", fmtPlain, "1001"},
	{"MaxDBDMsgs", fmtPlain, ""},
	{"MaxJobCount", fmtPlain, "10000"},
	{"MaxJobId", fmtPlain, "67043328"},
	{"MaxMem", fmtPlain, ""},
	{"MaxNodeCount", fmtPlain, ""},
	{"MaxStepCount", fmtPlain, "40000"},
	{"MaxTasksPerNode", fmtPlain, "512"},
	{"MCSPlugin", fmtPlain, "mcs/none"},
	{"MCSParameters", fmtPlain, ""},
	{"MessageTimeout", fmtSec, "10"},
	{"MinJobAge", fmtSec, "300"},
	{"MpiDefault", fmtPlain, "none"},
	{"MpiParams", fmtPlain, ""},
	{"NodeFeaturesPlugins", fmtPlain, ""},
	{"OverTimeLimit", fmtMin, "0"},
	{"PluginDir", fmtPlain, "/usr/local/lib/slurm"},
	{"PlugStackConfig", fmtPlain, ""},
	{"PowerParameters", fmtPlain, ""},
	{"PowerPlugin", fmtPlain, ""},
	{"PreemptMode", fmtUpper, "OFF"},
	{"PreemptType", fmtPlain, "preempt/none"},
	{"PreemptExemptTime", fmtPlain, "00:00:00"},
	{"PrEpParameters", fmtPlain, ""},
	{"PrEpPlugins", fmtPlain, "prep/script"},
	{"PriorityParameters", fmtPlain, ""},
	{"PrioritySiteFactorParameters", fmtPlain, ""},
	{"PrioritySiteFactorPlugin", fmtPlain, ""},
	{"PriorityDecayHalfLife", fmtDHMS, "10080"},
	{"PriorityCalcPeriod", fmtHMS, "5"},
	{"PriorityFavorSmall", fmtYesNo, "No"},
	{"PriorityFlags", fmtPlain, ""},
	{"PriorityMaxAge", fmtDHMS, "10080"},
	{"PriorityUsageResetPeriod", fmtUpper, "NONE"},
	{"PriorityType", fmtPlain, "priority/basic"},
	{"PriorityWeightAge", fmtPlain, "0"},
	{"PriorityWeightAssoc", fmtPlain, "0"},
	{"PriorityWeightFairShare", fmtPlain, "0"},
	{"PriorityWeightJobSize", fmtPlain, "0"},
	{"PriorityWeightPartition", fmtPlain, "0"},
	{"PriorityWeightQOS", fmtPlain, "0"},
	{"PriorityWeightTRES", fmtPlain, ""},
	{"PrivateData", fmtPlain, "none"},
	{"ProctrackType", fmtPlain, "proctrack/cgroup"},
	{"Prolog", fmtPlain, ""},
	{"PrologEpilogTimeout", fmtPlain, "65534"},
	{"PrologSlurmctld", fmtPlain, ""},
	{"PrologFlags", fmtPlain, ""},
	{"PropagatePrioProcess", fmtPlain, "0"},
	{"PropagateResourceLimits", fmtPlain, "ALL"},
	{"PropagateResourceLimitsExcept", fmtPlain, ""},
	{"RebootProgram", fmtPlain, ""},
	{"ReconfigFlags", fmtPlain, ""},
	{"RequeueExit", fmtPlain, ""},
	{"RequeueExitHold", fmtPlain, ""},
	{"ResumeFailProgram", fmtPlain, ""},
	{"ResumeProgram", fmtPlain, ""},
	{"ResumeRate", fmtRate, "300"},
	{"ResumeTimeout", fmtSec, "60"},
	{"ResvEpilog", fmtPlain, ""},
	{"ResvOverRun", fmtMin, "0"},
	{"ResvProlog", fmtPlain, ""},
	{"ReturnToService", fmtPlain, "0"},
	{"RoutePlugin", fmtPlain, "route/default"},
	{"SchedulerParameters", fmtPlain, ""},
	{"SchedulerTimeSlice", fmtSec, "30"},
	{"SchedulerType", fmtPlain, "sched/backfill"},
	{"ScronParameters", fmtPlain, ""},
	{"SelectType", fmtPlain, "select/cons_tres"},
	{"SelectTypeParameters", fmtUpper, "CR_CORE_MEMORY"},
	{"SlurmUser", fmtPlain, ""},
	{"SlurmctldAddr", fmtPlain, ""},
	{"SlurmctldDebug", fmtPlain, "info"},
	{"SlurmctldHost", fmtPlain, ""},
	{"SlurmctldLogFile", fmtPlain, ""},
	{"SlurmctldPort", fmtPlain, ""},
	{"SlurmctldSyslogDebug", fmtPlain, ""},
	{"SlurmctldPrimaryOffProg", fmtPlain, ""},
	{"SlurmctldPrimaryOnProg", fmtPlain, ""},
	{"SlurmctldTimeout", fmtSec, "120"},
	{"SlurmctldParameters", fmtPlain, ""},
	{"SlurmdDebug", fmtPlain, "info"},
	{"SlurmdLogFile", fmtPlain, ""},
	{"SlurmdParameters", fmtPlain, ""},
	{"SlurmdPidFile", fmtPlain, "/var/run/slurmd.pid"},
	{"SlurmdPort", fmtPlain, ""},
	{"SlurmdSpoolDir", fmtPlain, ""},
	{"SlurmdSyslogDebug", fmtPlain, ""},
	{"SlurmdTimeout", fmtSec, "300"},
	{"SlurmdUser", fmtPlain, ""},
	{"SlurmSchedLogFile", fmtPlain, ""},
	{"SlurmSchedLogLevel", fmtPlain, "0"},
	{"SlurmctldPidFile", fmtPlain, "/var/run/slurmctld.pid"},
	{"SlurmctldPlugstack", fmtPlain, ""},
	{"SLURM_CONF", fmtPlain, ""},
	{"SLURM_VERSION", fmtPlain, "22.05.8"},
	{"SrunEpilog", fmtPlain, ""},
	{"SrunPortRange", fmtPlain, "0-0"},
	{"SrunProlog", fmtPlain, ""},
	{"StateSaveLocation", fmtPlain, ""},
	{"SuspendExcNodes", fmtPlain, ""},
	{"SuspendExcParts", fmtPlain, ""},
	{"SuspendProgram", fmtPlain, ""},
	{"SuspendRate", fmtRate, "60"},
	{"SuspendTime", fmtPlain, "INFINITE"},
	{"SuspendTimeout", fmtSec, "30"},
	{"SwitchParameters", fmtPlain, ""},
	{"SwitchType", fmtPlain, "switch/none"},
	{"TaskEpilog", fmtPlain, ""},
	{"TaskPlugin", fmtPlain, "task/cgroup"},
	{"TaskPluginParam", fmtPlain, "(null type)"},
	{"TaskProlog", fmtPlain, ""},
	{"TCPTimeout", fmtSec, "2"},
	{"TmpFS", fmtPlain, "/tmp"},
	{"TopologyParam", fmtPlain, ""},
	{"TopologyPlugin", fmtPlain, "topology/none"},
	{"TrackWCKey", fmtYesNo, "No"},
	{"TreeWidth", fmtPlain, "50"},
	{"UsePam", fmtYesNo, "No"},
	{"UnkillableStepProgram", fmtPlain, ""},
	{"UnkillableStepTimeout", fmtSec, "60"},
	{"VSizeFactor", fmtPct, "0"},
	{"WaitTime", fmtSec, "0"},
	{"X11Parameters", fmtPlain, ""},
}

// multifactorOnly are the priority keys Slurm shows only under
// PriorityType=priority/multifactor.
var multifactorOnly = map[string]bool{
	"PriorityDecayHalfLife": true, "PriorityCalcPeriod": true, "PriorityFavorSmall": true,
	"PriorityFlags": true, "PriorityMaxAge": true, "PriorityUsageResetPeriod": true,
	"PriorityWeightAge": true, "PriorityWeightAssoc": true, "PriorityWeightFairShare": true,
	"PriorityWeightJobSize": true, "PriorityWeightPartition": true, "PriorityWeightQOS": true,
	"PriorityWeightTRES": true,
}

// ShowConfig is what scontrol show config prints for c: every key Slurm
// 22.05 prints, in its order, with the effective value (slurm.conf's or
// the default) in Slurm's format and units, then the keys only Drover
// knows (Drover*). boot is the controller's start time (0: not shown).
func (c *Config) ShowConfig(boot time.Time) [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if v == "" && k != "PowerPlugin" && k != "PriorityFlags" { // Slurm leaves these two blank
			v = "(null)"
		}
		out = append(out, [2]string{k, v})
	}
	multifactor := false
	if v, ok := c.Get("PriorityType"); ok && strings.EqualFold(v, "priority/multifactor") {
		multifactor = true
	}
	for _, sk := range showKeys {
		if multifactorOnly[sk.key] && !multifactor {
			continue
		}
		raw, set := c.Get(sk.key)
		switch sk.key {
		case "BOOT_TIME":
			if !boot.IsZero() {
				add(sk.key, boot.Format("2006-01-02T15:04:05"))
			}
			continue
		case "ClusterName":
			add(sk.key, c.ClusterName)
			continue
		case "DefMem":
			switch {
			case c.DefMemPerCPU > 0:
				add("DefMemPerCPU", strconv.FormatInt(c.DefMemPerCPU, 10))
			case c.DefMemPerNode > 0:
				add("DefMemPerNode", strconv.FormatInt(c.DefMemPerNode, 10))
			default:
				add("DefMemPerNode", "UNLIMITED")
			}
			continue
		case "MaxMem":
			switch {
			case c.MaxMemPerCPU > 0:
				add("MaxMemPerCPU", strconv.FormatInt(c.MaxMemPerCPU, 10))
			case c.MaxMemPerNode > 0:
				add("MaxMemPerNode", strconv.FormatInt(c.MaxMemPerNode, 10))
			default:
				add("MaxMemPerNode", "UNLIMITED")
			}
			continue
		case "MaxDBDMsgs":
			if !set {
				raw = strconv.Itoa(max(10000, 2*c.MaxJobCount+4*len(c.Nodes)))
			}
			add(sk.key, raw)
			continue
		case "MaxNodeCount":
			add(sk.key, strconv.Itoa(len(c.Nodes)))
			continue
		case "MaxArraySize":
			add(sk.key, strconv.Itoa(c.MaxArraySize))
			continue
		case "MaxJobCount":
			add(sk.key, strconv.Itoa(c.MaxJobCount))
			continue
		case "FirstJobId":
			add(sk.key, strconv.FormatUint(uint64(c.FirstJobID), 10))
			continue
		case "KillWait", "MinJobAge", "SlurmdTimeout", "InactiveLimit":
			d := map[string]time.Duration{"KillWait": c.KillWait, "MinJobAge": c.MinJobAge,
				"SlurmdTimeout": c.SlurmdTimeout, "InactiveLimit": c.InactiveLimit}[sk.key]
			add(sk.key, fmt.Sprintf("%d sec", int64(d/time.Second)))
			continue
		case "ReturnToService":
			add(sk.key, strconv.Itoa(c.ReturnToService))
			continue
		case "SlurmUser", "SlurmdUser":
			name := c.SlurmUser
			if sk.key == "SlurmdUser" {
				name = "root"
				if set {
					name = raw
				}
			}
			uid := "?"
			if u, err := nss.Lookup(name); err == nil {
				uid = u.Uid
			}
			add(sk.key, name+"("+uid+")")
			continue
		case "SlurmctldHost":
			for i, h := range c.ControllerHosts {
				v := h.Name
				if h.Addr != "" {
					v += "(" + h.Addr + ")"
				}
				add(fmt.Sprintf("SlurmctldHost[%d]", i), v)
			}
			continue
		case "SlurmctldPort":
			add(sk.key, strconv.Itoa(c.SlurmctldPort))
			continue
		case "SlurmdPort":
			add(sk.key, strconv.Itoa(c.SlurmdPort))
			continue
		case "SlurmdSpoolDir":
			add(sk.key, c.SlurmdSpoolDir)
			continue
		case "StateSaveLocation":
			add(sk.key, c.StateSaveLocation)
			continue
		case "SLURM_CONF":
			add(sk.key, c.File)
			continue
		case "AccountingStorageTRES":
			v := sk.def
			if set && raw != "" {
				v += "," + raw
			}
			add(sk.key, v)
			continue
		case "AccountingStorageType":
			// The effective store: Drover keeps accounting in SQLite
			// unless told otherwise.
			if !set && c.Accounting.Type != "" {
				raw = "accounting_storage/" + c.Accounting.Type
			}
			add(sk.key, cmp.Or(raw, sk.def))
			continue
		case "GresTypes":
			add(sk.key, strings.Join(c.GresTypes, ","))
			continue
		}
		if !set {
			if sk.def != "" {
				add(sk.key, formatShow(sk.kind, sk.def))
			} else {
				add(sk.key, "")
			}
			continue
		}
		add(sk.key, formatShow(sk.kind, raw))
	}
	for _, kv := range c.Raw {
		if strings.HasPrefix(strings.ToLower(kv.Key), "drover") {
			add(kv.Key, kv.Value)
		}
	}
	return out
}

// formatShow renders a configured value as scontrol show config does.
func formatShow(kind int, v string) string {
	switch kind {
	case fmtSec, fmtMin, fmtUsec, fmtPct, fmtRate:
		unit := map[int]string{fmtSec: "sec", fmtMin: "min", fmtUsec: "usec", fmtPct: "percent", fmtRate: "nodes/min"}[kind]
		return strings.TrimSpace(v) + " " + unit
	case fmtYesNo:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "yes", "y", "true":
			return "Yes"
		}
		return "No"
	case fmtHMS, fmtDHMS:
		m, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return v
		}
		d, h, mm := m/1440, (m%1440)/60, m%60
		if kind == fmtDHMS || d > 0 {
			return fmt.Sprintf("%d-%02d:%02d:00", d, h, mm)
		}
		return fmt.Sprintf("%02d:%02d:00", h, mm)
	case fmtUpper:
		return strings.ToUpper(v)
	}
	return v
}
