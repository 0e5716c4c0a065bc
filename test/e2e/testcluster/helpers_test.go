package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// These tests cover the parts of the helper that need no cluster; the
// cluster itself is exercised by test/e2e.

const sampleAudit = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns1/configmaps","verb":"create","user":{"username":"admin","groups":["system:masters"]},"userAgent":"e2e.test","objectRef":{"resource":"configmaps","namespace":"ns1","name":"cm1","apiVersion":"v1"},"responseStatus":{"code":201},"stageTimestamp":"2026-11-30T10:00:00.000000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/apis/apps/v1/daemonsets?limit=500","verb":"list","user":{"username":"reader"},"objectRef":{"resource":"daemonsets","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"code":200},"stageTimestamp":"2026-11-30T10:00:01.000000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseStarted","requestURI":"/api/v1/pods?watch=true","verb":"watch","user":{"username":"reader"},"objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/api/v1/nodes/n1/status","verb":"patch","user":{"username":"admin"},"objectRef":{"resource":"nodes","name":"n1","subresource":"status","apiVersion":"v1"},"responseStatus":{"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/version","verb":"get","user":{"username":"reader"},"responseStatus":{"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/default/configmaps/kubegap-audit-marker-1","verb":"get","user":{"username":"testbed-marker"},"objectRef":{"resource":"configmaps","namespace":"default","name":"kubegap-audit-marker-1"},"responseStatus":{"code":403}}
`

func TestParseAudit(t *testing.T) {
	tests := []struct {
		user string
		want []string // verb resource/subresource ns/name code
	}{
		{"admin", []string{"create configmaps/ ns1/cm1 201", "patch nodes/status /n1 200"}},
		{"reader", []string{"list daemonsets/ / 200", "get / / 200"}},
		{"", []string{"create configmaps/ ns1/cm1 201", "list daemonsets/ / 200", "patch nodes/status /n1 200", "get / / 200"}},
		{"nobody", nil},
	}
	for _, tt := range tests {
		t.Run("user="+tt.user, func(t *testing.T) {
			reqs, err := parseAudit(strings.NewReader(sampleAudit), tt.user)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range reqs {
				got = append(got, r.Verb+" "+r.Resource+"/"+r.Subresource+" "+r.Namespace+"/"+r.Name+" "+strconv.Itoa(r.Code))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	reqs, _ := parseAudit(strings.NewReader(sampleAudit), "reader")
	if reqs[0].APIGroup != "apps" || reqs[0].RequestURI != "/apis/apps/v1/daemonsets?limit=500" || reqs[0].Time.IsZero() {
		t.Errorf("fields not carried over: %+v", reqs[0])
	}
	if _, err := parseAudit(strings.NewReader("{not json\n"), ""); err == nil {
		t.Error("malformed line accepted")
	}
}

func TestScanForIgnoresPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	content := "line one\nline marker-1 two\nline marker-2 partial"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		needle    string
		from      int64
		wantFound bool
		wantEnd   int64
	}{
		{"marker-1", 0, true, int64(len("line one\nline marker-1 two\n"))},
		// Not complete yet: a writer is still on that line.
		{"marker-2", 0, false, int64(len("line one\nline marker-1 two\n"))},
		// Starting past a match does not find it again.
		{"marker-1", int64(len("line one\nline marker-1 two\n")), false, int64(len("line one\nline marker-1 two\n"))},
	}
	for _, tt := range tests {
		t.Run(tt.needle, func(t *testing.T) {
			end, found, err := scanFor(path, tt.from, []byte(tt.needle))
			if err != nil {
				t.Fatal(err)
			}
			if found != tt.wantFound || end != tt.wantEnd {
				t.Errorf("scanFor = %d, %v; want %d, %v", end, found, tt.wantEnd, tt.wantFound)
			}
		})
	}
}

func TestDecodeObjects(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // kind/name
		wantErr string
	}{
		{"multi-document", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n",
			[]string{"Node/a", "Pod/b"}, ""},
		{"list", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"Node","metadata":{"name":"b"}}]}`,
			[]string{"Node/a", "Node/b"}, ""},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", nil, "document 0: apiVersion and kind are required"},
		{"malformed second document", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\nkind: [\n", nil, "document 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := decodeObjects([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToUnstructuredAndStrip(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "7", UID: "u-1"}}
	u, err := toUnstructured(node)
	if err != nil {
		t.Fatal(err)
	}
	if u.GetAPIVersion() != "v1" || u.GetKind() != "Node" {
		t.Errorf("typed object without TypeMeta became %s %s, want v1 Node", u.GetAPIVersion(), u.GetKind())
	}
	stripServerFields(u)
	if u.GetResourceVersion() != "" || u.GetUID() != "" || u.GetName() != "n" {
		t.Errorf("after strip: rv %q uid %q name %q", u.GetResourceVersion(), u.GetUID(), u.GetName())
	}
	if node.ResourceVersion != "7" {
		t.Error("toUnstructured modified its input")
	}
	if _, err := toUnstructured(nil); err == nil {
		t.Error("nil object accepted")
	}
}

func TestGetWithoutMain(t *testing.T) {
	// This package has no TestMain: Get must fail the test, not start a
	// cluster nobody tears down. A fake TB records the failure.
	ft := &fatalTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		Get(ft)
	}()
	if !ft.failed || !strings.Contains(ft.msg, "TestMain") {
		t.Errorf("Get without Main: failed=%v msg=%q", ft.failed, ft.msg)
	}
}

// fatalTB records Fatal instead of ending the test.
type fatalTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.failed = true
	f.msg = fmt.Sprint(args...)
	// Stand in for runtime.Goexit, which would end the real test.
	panic("fatal")
}

func TestSweepStaleDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// A PID that surely ended: a child we started and reaped.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	dirs := map[string]string{ // name -> owner.pid content ("" for none)
		dirPrefix + "dead":      strconv.Itoa(dead),
		dirPrefix + "alive":     strconv.Itoa(os.Getpid()),
		dirPrefix + "settingup": "",
		"unrelated-dir":         strconv.Itoa(dead),
	}
	for name, owner := range dirs {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	sweepStaleDirs()
	for name := range dirs {
		_, err := os.Stat(filepath.Join(tmp, name))
		if gone, want := os.IsNotExist(err), name == dirPrefix+"dead"; gone != want {
			t.Errorf("%s: removed = %v, want %v", name, gone, want)
		}
	}
}
