package apimetrics

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkReadLarge reads a 30 MB exposition shaped as kube-apiserver's
// (families sorted by name, one large histogram family) and keeps the
// deprecated-API series: go test -run NONE -bench . -benchmem ./internal/apimetrics
func BenchmarkReadLarge(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("# HELP apiserver_request_duration_seconds x\n# TYPE apiserver_request_duration_seconds histogram\n")
	for i := 0; buf.Len() < 20<<20; i++ {
		for _, le := range []string{"0.005", "0.1", "1", "+Inf"} {
			fmt.Fprintf(&buf, "apiserver_request_duration_seconds_bucket{resource=\"r%d\",verb=\"LIST\",le=%q} %d\n", i, le, i)
		}
		fmt.Fprintf(&buf, "apiserver_request_duration_seconds_sum{resource=\"r%d\",verb=\"LIST\"} 1\n", i)
		fmt.Fprintf(&buf, "apiserver_request_duration_seconds_count{resource=\"r%d\",verb=\"LIST\"} %d\n", i, i)
	}
	buf.WriteString("# HELP apiserver_request_total x\n# TYPE apiserver_request_total counter\n")
	for i := 0; buf.Len() < 28<<20; i++ {
		fmt.Fprintf(&buf, "apiserver_request_total{code=\"200\",resource=\"r%d\",verb=\"GET\"} %d\n", i, i)
	}
	buf.WriteString("# HELP apiserver_requested_deprecated_apis x\n# TYPE apiserver_requested_deprecated_apis gauge\n")
	buf.WriteString("apiserver_requested_deprecated_apis{group=\"resource.k8s.io\",removed_release=\"1.38\",resource=\"deviceclasses\",subresource=\"\",version=\"v1beta1\"} 1\n")
	buf.WriteString("# HELP workqueue_depth x\n# TYPE workqueue_depth gauge\n")
	for i := 0; buf.Len() < 30<<20; i++ {
		fmt.Fprintf(&buf, "workqueue_depth{name=\"q%d\"} 0\n", i)
	}
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		got, err := Read(bytes.NewReader(in), DeprecatedAPIs)
		if err != nil || len(got[DeprecatedAPIs]) != 1 {
			b.Fatalf("%v %v", got, err)
		}
	}
}
