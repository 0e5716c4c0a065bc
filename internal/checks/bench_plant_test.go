package checks_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// plantFixtures adds the objects of check fixtures (paths under
// internal/checks, such as "dns/testdata/x/gap.yaml") to a benchmark's
// generated snapshot: a check added to a benchmark then times the large
// cluster with its own gap in it, as read by the loader from the fixture
// its tests use, instead of a hand-built copy of it. Call it before any
// check runs (the snapshot's index is built on first use).
func plantFixtures(tb testing.TB, s *snapshot.Snapshot, files ...string) {
	tb.Helper()
	for _, f := range files {
		fx, err := snapshot.LoadPaths([]string{filepath.FromSlash(f)})
		if err != nil {
			tb.Fatalf("loading %s: %v", f, err)
		}
		dst, src := reflect.ValueOf(s).Elem(), reflect.ValueOf(fx).Elem()
		for i := range dst.NumField() {
			field := dst.Type().Field(i)
			if !field.IsExported() || field.Type.Kind() != reflect.Slice || field.Name == "DeprecatedAPIRequests" || field.Name == "StorageSizes" {
				continue
			}
			dst.Field(i).Set(reflect.AppendSlice(dst.Field(i), src.Field(i)))
		}
		for key, objs := range fx.Custom {
			if s.Custom == nil {
				s.Custom = map[string][]unstructured.Unstructured{}
			}
			s.Custom[key] = append(s.Custom[key], objs...)
		}
	}
}
