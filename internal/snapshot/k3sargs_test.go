package snapshot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestK3sNodeArgsKept: a k3s node's recorded arguments keep only the
// subcommand, --flannel-backend and the etcd-arg quota as the node is
// read; addresses, labels and other etcd-args are gone, and a value that
// is not a JSON list is dropped.
func TestK3sNodeArgsKept(t *testing.T) {
	for in, want := range map[string]string{
		`["server","--flannel-backend","wireguard","--token","********","--tls-san","10.0.0.1"]`:         `["server","--flannel-backend","wireguard"]`,
		`["server","--etcd-arg","quota-backend-bytes=8589934592","--etcd-arg","heartbeat-interval=500"]`: `["server","--etcd-arg","quota-backend-bytes=8589934592"]`,
		`["agent","--server","https://10.0.0.10:6443","--node-label","team=a"]`:                          `["agent"]`,
		`not json`: "",
	} {
		got, ok := K3sNodeArgsKept(in)
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", in, got, ok, want)
		}
	}
	doc := `apiVersion: v1
kind: Node
metadata:
  name: n1
  annotations:
    k3s.io/node-args: '["server","--flannel-backend","vxlan","--tls-san","secret.example.com"]'
    k3s.io/node-env: '{"K3S_DATA_DIR":"/x"}'
status: {nodeInfo: {kubeletVersion: v1.31.5+k3s1}}
`
	path := filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadPaths([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	a := s.Nodes[0].Annotations
	if a[AnnotationK3sNodeArgs] != `["server","--flannel-backend","vxlan"]` || a["k3s.io/node-env"] != "" {
		t.Errorf("annotations kept: %v", a)
	}
}
