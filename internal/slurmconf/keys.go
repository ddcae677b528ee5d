package slurmconf

import (
	"strings"
	"sync"
)

// Slurm accepts far more keys than Drover acts on. Keys listed here are
// valid slurm.conf keys: Drover keeps them in Config.Raw (so `scontrol show
// config` can echo them) without warning. Anything else earns an "unknown
// key" warning, which catches typos without refusing a config that real
// Slurm would accept.

// globalKeys are the top-level keys, including retired ones still found in
// old configs.
var globalKeys = keySet(`
AccountingStorageBackupHost AccountingStorageEnforce AccountingStorageExternalHost
AccountingStorageHost AccountingStorageLoc AccountingStorageParameters AccountingStoragePass
AccountingStoragePort AccountingStorageTRES AccountingStorageType AccountingStorageUser
AccountingStoreFlags AccountingStoreJobComment AcctGatherEnergyType AcctGatherFilesystemType
AcctGatherInterconnectType AcctGatherNodeFreq AcctGatherProfileType AllowSpecResourcesUsage
AuthAltParameters AuthAltTypes AuthInfo AuthType BackupAddr BackupController
BatchStartTimeout BcastExclude BcastParameters BurstBufferType CacheGroups CertgenParameters
CertgenType CertmgrParameters CertmgrType CheckpointType CliFilterParameters CliFilterPlugins
ClusterName CommunicationParameters CompleteWait ControlAddr ControlMachine CoreSpecPlugin
CpuFreqDef CpuFreqGovernors CredType CryptoType DataParserParameters DebugFlags DefCpuPerGPU
DefMemPerCPU DefMemPerGPU DefMemPerNode DependencyParameters DisableRootJobs
EioTimeout EnforcePartLimits Epilog EpilogMsgTime EpilogSlurmctld EpilogTimeout
ExtSensorsFreq ExtSensorsType FairShareDampeningFactor FastSchedule FederationParameters
FirstJobId GetEnvTimeout GpuFreqDef GresTypes GroupUpdateForce GroupUpdateTime HashPlugin
HealthCheckInterval HealthCheckNodeState HealthCheckProgram InactiveLimit
InteractiveStepOptions JobAcctGatherFrequency JobAcctGatherParams JobAcctGatherType
JobCheckpointDir JobCompHost JobCompLoc JobCompParams JobCompPass JobCompPort JobCompType
JobCompUser JobContainerType JobCredentialPrivateKey JobCredentialPublicCertificate
JobDefaults JobFileAppend JobRequeue JobSubmitPlugins KeepAliveTime KillOnBadExit KillWait
LaunchParameters LaunchType Licenses LogTimeFormat MailDomain MailProg MaxArraySize
MaxBatchRequeue MaxDBDMsgs MaxJobCount MaxJobId MaxMemPerCPU MaxMemPerNode MaxNodeCount
MaxStepCount MaxTasksPerNode MCSParameters MCSPlugin MemLimitEnforce MessageTimeout
MinJobAge MpiDefault MpiParams NamespaceType NodeFeaturesPlugins OverTimeLimit PluginDir
PlugStackConfig PowerParameters PowerPlugin PreemptExemptTime PreemptMode PreemptParameters
PreemptType PrEpParameters PrEpPlugins PriorityCalcPeriod PriorityDecayHalfLife
PriorityFavorSmall PriorityFlags PriorityMaxAge PriorityParameters
PrioritySiteFactorParameters PrioritySiteFactorPlugin PriorityType PriorityUsageResetPeriod
PriorityWeightAge PriorityWeightAssoc PriorityWeightFairshare PriorityWeightJobSize
PriorityWeightPartition PriorityWeightQOS PriorityWeightTRES PrivateData ProctrackType
Prolog PrologEpilogTimeout PrologFlags PrologSlurmctld PrologTimeout PropagatePrioProcess
PropagateResourceLimits PropagateResourceLimitsExcept RebootProgram ReconfigFlags
RequeueExit RequeueExitHold ResumeFailProgram ResumeProgram ResumeRate ResumeTimeout
ResvEpilog ResvOverRun ResvProlog ReturnToService RoutePlugin SchedulerAuth
SchedulerParameters SchedulerPort SchedulerRootFilter SchedulerTimeSlice SchedulerType
ScronParameters SelectType SelectTypeParameters SlurmctldAddr SlurmctldDebug SlurmctldHost
SlurmctldLogFile SlurmctldParameters SlurmctldPidFile SlurmctldPlugstack SlurmctldPort
SlurmctldPrimaryOffProg SlurmctldPrimaryOnProg SlurmctldSyslogDebug SlurmctldTimeout
SlurmdDebug SlurmdLogFile SlurmdParameters SlurmdPidFile SlurmdPort SlurmdSpoolDir
SlurmdSyslogDebug SlurmdTimeout SlurmdUser SlurmrestdParameters SlurmSchedLogFile
SlurmSchedLogLevel SlurmUser SrunEpilog SrunPortRange SrunProlog StateSaveLocation
SuspendExcNodes SuspendExcParts SuspendExcStates SuspendProgram SuspendRate SuspendTime
SuspendTimeout SwitchParameters SwitchType TaskEpilog TaskPlugin TaskPluginParam TaskProlog
TCPTimeout TLSParameters TLSType TmpFS TopologyParam TopologyPlugin TrackWCKey TreeWidth
UnkillableStepProgram UnkillableStepTimeout UsePam VSizeFactor WaitTime X11Parameters
DroverSocket DroverTokenFile DroverMinFreeSpace DroverMaxConnsPerUser DroverConnIdleTimeout DroverMaxUserJobBytes
DroverFsyncBeforeReply
`)

// nodeKeys are the keys of a NodeName line.
var nodeKeys = keySet(`
NodeName NodeAddr NodeHostname Port CPUs Procs Boards Sockets SocketsPerBoard CoresPerSocket
ThreadsPerCore RealMemory TmpDisk Gres Feature Features State Weight Reason
BcastAddr CoreSpecCount CpuBind CpuSpecList Comment Extra MemSpecLimit Parameters
RestrictedCoresPerGPU Topology TRESWeights
`)

// partitionKeys are the keys of a PartitionName line.
var partitionKeys = keySet(`
PartitionName Nodes Default MaxTime DefaultTime State Priority PriorityTier PriorityJobFactor
MaxNodes MinNodes AllowAccounts AllowGroups OverSubscribe Shared
AllocNodes AllowQos Alternate CpuBind DefCpuPerGPU DefMemPerCPU DefMemPerGPU DefMemPerNode
DenyAccounts DenyQos DisableRootJobs ExclusiveTopo ExclusiveUser GraceTime Hidden LLN
MaxCPUsPerNode MaxCPUsPerSocket MaxMemPerCPU MaxMemPerNode OverTimeLimit PowerDownOnIdle
PreemptMode QOS ReqResv ResumeTimeout RootOnly SelectTypeParameters SuspendTime
SuspendTimeout Topology TRESBillingWeights
`)

// downNodesKeys and nodeSetKeys are the keys of DownNodes and NodeSet lines.
var (
	downNodesKeys = keySet(`DownNodes Reason State`)
	nodeSetKeys   = keySet(`NodeSet Nodes Feature`)
)

// keySet is a set of lower-cased words, made on first use: the Slurm
// commands start often and read only slurm.conf, so the sets of the other
// files (and of keys their lines never hold) are never made for them.
// The set is the words lower-cased in one string, searched: building a
// map of slurm.conf's ~300 top-level keys cost every command ~90 µs, more
// than all its lookups in the string.
func keySet(words string) *lazySet { return &lazySet{words: words} }

type lazySet struct {
	words string
	once  sync.Once
	lower string // words lower-cased, space-separated, with a space at each end
}

// has reports whether the set holds w (given lower-cased).
func (s *lazySet) has(w string) bool {
	s.once.Do(s.lowerWords)
	if w == "" || strings.IndexByte(w, ' ') >= 0 {
		return false // no word is empty or spans two
	}
	// A whole word: spaces both sides (s.lower starts and ends with one,
	// and w holds none, so both neighbours exist).
	for off := 0; ; {
		i := strings.Index(s.lower[off:], w)
		if i < 0 {
			return false
		}
		i += off
		if s.lower[i-1] == ' ' && s.lower[i+len(w)] == ' ' {
			return true
		}
		off = i + 1
	}
}

// lowerWords sets s.lower in one pass (the words are ASCII): ToLower,
// Fields and Join took half of the set's cost.
func (s *lazySet) lowerWords() {
	var b strings.Builder
	b.Grow(len(s.words) + 2)
	b.WriteByte(' ')
	space := true // the last byte written is a space
	for i := 0; i < len(s.words); i++ {
		switch c := s.words[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			if !space {
				b.WriteByte(' ')
				space = true
			}
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
			space = false
		default:
			b.WriteByte(c)
			space = false
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	s.lower = b.String()
}

// prologFlags and healthCheckStates are the values slurm.conf(5) lists
// for PrologFlags and HealthCheckNodeState; others earn a warning.
var (
	prologFlags       = keySet(`Alloc Contain DeferBatch ForceRequeueOnFail NoHold RunInJob Serial X11`)
	healthCheckStates = keySet(`ALLOC ANY CYCLE IDLE NONDRAINED_IDLE MIXED REBOOT_ONLY START_ONLY`)
)
