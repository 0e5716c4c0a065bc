package runtime

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The DaemonSet that put a failing binary on the nodes is what a sandbox
// failure finding should lead to: CNI plugins are copied into the host's
// /opt/cni/bin by an init container of the network's DaemonSet (azure-cns,
// aws-node, calico-node, ...). The kubelet's event names the binary's
// path; a DaemonSet mounting that host directory writable (the
// host-binary-glibc rules, host_binary_glibc.go) is its installer.

// messagePath finds absolute paths in an event message.
var messagePath = regexp.MustCompile(`/[A-Za-z0-9._+-]+(?:/[A-Za-z0-9._+-]+)+`)

// failingBinaries are the paths in hits' event messages that lie in a host
// binary directory, with that directory.
func failingBinaries(f *hostBinaryFacts, hits []sandboxHit) map[string]string {
	out := map[string]string{}
	for _, h := range hits {
		for _, p := range messagePath.FindAllString(h.event.Message, -1) {
			p = path.Clean(p)
			for _, dir := range f.HostBinaryPaths {
				if p != dir && strings.HasPrefix(p, dir+"/") {
					out[p] = dir
				}
			}
		}
	}
	return out
}

// addInstallers names, in f, the DaemonSets that write into the host
// directory of a binary the failing pods' events name: every such
// DaemonSet whose pods in the input run on a failing node, or, when the
// input holds none of its pods, every one (then said to be unconfirmed).
func addInstallers(f *finding.Finding, s *snapshot.Snapshot, facts *hostBinaryFacts, hits []sandboxHit) {
	bins := failingBinaries(facts, hits)
	if len(bins) == 0 {
		return
	}
	dirs := map[string][]string{} // directory -> failing binaries in it
	for p, dir := range bins {
		dirs[dir] = append(dirs[dir], p)
	}
	failing := map[string]bool{}
	for _, h := range hits {
		failing[h.pod.Spec.NodeName] = true
	}
	ix := s.Index()
	type installer struct {
		ref   finding.ObjectRef
		name  string
		lines []string
		// names: a writing container's command or args name a failing
		// binary, as an installer's copy command does.
		names bool
	}
	var found []installer
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		in := installer{ref: finding.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name},
			name: "DaemonSet " + ds.Namespace + "/" + ds.Name}
		for _, w := range facts.hostWrites(ds) {
			for _, dir := range w.dirs {
				binsIn := dirs[dir]
				if len(binsIn) == 0 {
					continue
				}
				slices.Sort(binsIn)
				in.lines = append(in.lines, fmt.Sprintf("%s %s can write into %s, where the failing %s lies (image %s): %s",
					in.name, w.field, dir, strings.Join(binsIn, ", "), w.container.Image, w.evidence[0]))
				cmd := strings.Join(append(slices.Clone(w.container.Command), w.container.Args...), " ")
				for _, b := range binsIn {
					if cmd != "" && strings.Contains(cmd, path.Base(b)) {
						in.names = true
						in.lines = append(in.lines, fmt.Sprintf("%s %s runs %q, which names %s", in.name, w.field, cmd, path.Base(b)))
						break
					}
				}
			}
		}
		if len(in.lines) == 0 {
			continue
		}
		pods := ix.PodsControlledBy(snapshot.IDOf("DaemonSet", &ds.ObjectMeta))
		on := ""
		for _, p := range pods {
			if failing[p.Spec.NodeName] {
				on = p.Spec.NodeName
				break
			}
		}
		switch {
		case on != "":
			in.lines = append(in.lines, fmt.Sprintf("%s has a pod on failing node %s", in.name, on))
		case len(pods) > 0:
			continue // its pods run elsewhere: not the installer on these nodes
		default:
			in.lines = append(in.lines, "none of the pods of "+in.name+" is in the input, so whether it runs on the failing nodes is not shown")
			in.name += " (unconfirmed)"
		}
		found = append(found, in)
	}
	// A DaemonSet whose command names the binary is its installer; others
	// that merely share the directory are then left out.
	if slices.ContainsFunc(found, func(in installer) bool { return in.names }) {
		found = slices.DeleteFunc(found, func(in installer) bool { return !in.names })
	}
	var named []string
	for _, in := range found {
		named = append(named, in.name)
		f.Objects = append(f.Objects, in.ref)
		f.Evidence = append(f.Evidence, in.lines...)
	}
	if len(named) > 0 {
		f.Message += fmt.Sprintf(" The failing binary sits in a host directory that %s writes into: look there for the change.",
			strings.Join(named, " and "))
	}
}
