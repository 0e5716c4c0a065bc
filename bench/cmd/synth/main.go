// Command synth writes the snapshot of a generated cluster without an API
// server: bench/loadgen fills an in-memory fake clientset, and every
// resource a live audit reads is added to a snapshot as the live reader
// adds it (Warning events only, as its field selector asks). Loading the
// real test bed with 100k pods takes about 20 minutes; synth takes
// seconds, so offline load time and memory can be profiled at any size.
// The objects lack what only an API server adds (managedFields, resource
// versions), which the snapshot trims or ignores anyway.
//
// With --yaml-list FILE it also writes the same objects, whole (not
// trimmed), as one YAML List the way "kubectl get nodes,pods,... -A -o
// yaml" prints it, for measuring offline audits of kubectl dumps.
//
//	synth --nodes 5000 --pods 100000 [--seed 1] [-o snapshot.json.gz] [--yaml-list dump.yaml]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubegap/kubegap/bench/loadgen"
	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
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
	// NewSimpleClientset: the field-managing NewClientset needs minutes and
	// gigabytes for 100k pods, and managedFields are trimmed anyway.
	cs := fake.NewSimpleClientset()
	// The API server gives every object a UID, and owner references
	// point at it; the fake tracker does not, so give them here.
	var uids atomic.Int64
	cs.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(k8stesting.CreateAction).GetObject().(metav1.Object); ok && o.GetUID() == "" {
			o.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", uids.Add(1))))
		}
		return false, nil, nil
	})
	if _, err := loadgen.Run(context.Background(), cs, spec, io.Discard); err != nil {
		return err
	}
	var yl *yamlList
	if *yamlOut != "" {
		var err error
		if yl, err = newYAMLList(*yamlOut); err != nil {
			return err
		}
		defer yl.abort()
	}
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster, ServerVersion: "v1.37.2"})
	for _, r := range audit.Resources(checks.All()) {
		_, add, ok := snapshot.ListKind(r)
		if !ok {
			s.SetCoverage(r, snapshot.StatusNotServed, "")
			continue
		}
		list, err := cs.Tracker().List(r.GVR(), schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, "")
		if err != nil {
			return fmt.Errorf("listing %s: %w", r, err)
		}
		if el, ok := list.(*corev1.EventList); ok {
			warn := el.Items[:0]
			for _, e := range el.Items {
				if e.Type == corev1.EventTypeWarning {
					warn = append(warn, e)
				}
			}
			el.Items = warn
		}
		if yl != nil {
			// Before add, which trims the objects in place.
			if err := yl.add(r, list); err != nil {
				return err
			}
		}
		add(s, list)
		s.SetCoverage(r, snapshot.StatusRead, "")
	}
	if yl != nil {
		if err := yl.close(); err != nil {
			return err
		}
	}
	if *out == "" {
		return nil
	}
	s.Finish()
	return s.SaveFile(*out)
}
