// Package harness runs kubegap's scale benchmark (issue 8) against the real
// test bed: it starts kube-apiserver and etcd, fills them with a generated
// cluster (bench/loadgen), and times the floor lister, a live audit, a
// snapshot and an offline audit of it, and kubectl, reporting wall time and
// peak RSS. bench/run.sh builds the binaries and runs it; its test does
// nothing unless KUBEGAP_BENCH=1, so that go test ./... stays fast.
package harness
