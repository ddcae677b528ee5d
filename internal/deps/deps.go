package deps

import (
	_ "github.com/hashicorp/raft"
	_ "github.com/hashicorp/raft-wal"
	_ "github.com/spf13/pflag"
	_ "google.golang.org/grpc"
	_ "google.golang.org/protobuf/proto"
)
