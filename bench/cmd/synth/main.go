// Command synth writes the snapshot of a generated cluster without an API
// server: bench/loadgen generates the objects its loader would create, in
// their final state, and each one a live audit reads is trimmed and written
// at once (Warning events only, as the live reader's field selector asks),
// so that memory stays bounded at any size: 2M pods take the memory of
// 100. Loading the real test bed with 100k pods takes about 20 minutes;
// synth takes seconds, so offline load time and memory can be profiled at
// any size. UIDs follow from each object's kind, namespace and name
// (loadgen.UID); the objects lack what only an API server adds
// (managedFields, resource versions), which the snapshot trims or ignores
// anyway.
//
// With --yaml-list FILE it also writes the same objects, whole (not
// trimmed), as one YAML List the way "kubectl get nodes,pods,... -A -o
// yaml" prints it, for measuring offline audits of kubectl dumps.
//
//	synth --nodes 5000 --pods 100000 [--seed 1] [-o snapshot.json.gz] [--yaml-list dump.yaml]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kubegap/kubegap/bench/loadgen"
	"github.com/kubegap/kubegap/bench/synthsnap"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "synth: %v\n", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	var spec loadgen.Spec
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.IntVar(&spec.Nodes, "nodes", 500, "nodes")
	fs.IntVar(&spec.Pods, "pods", 10000, "pods, DaemonSet pods included")
	fs.Uint64Var(&spec.Seed, "seed", 1, "seed")
	out := fs.String("o", "", "snapshot file to write (.gz to compress)")
	yamlOut := fs.String("yaml-list", "", "also write the objects as one kubectl-style YAML List to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" && *yamlOut == "" {
		return fmt.Errorf("-o or --yaml-list is required")
	}
	return synthsnap.Write(spec, *out, *yamlOut)
}
