package localwire

// Fingerprint identifies the definitions of the types the messages carry
// (see fingerprint); a constant, so that a command computes nothing. When
// a carried type changes, TestFingerprintIsCurrent fails and prints the
// new value to put here.
const Fingerprint uint64 = 0x9cf57732d8888e94
