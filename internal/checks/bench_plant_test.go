package checks_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
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

// benchEachChecked times each check of ids on s as a sub-benchmark (CPU per
// run beside the wall time) and fails a run whose findings want rejects:
// want says what was wrong, or "" when the findings are the ones the
// snapshot was built to give. benchEach is the same with "at least n".
func benchEachChecked(b *testing.B, s *snapshot.Snapshot, ids []string, want func(id string, fs []finding.Finding) string) {
	b.Helper()
	for _, id := range ids {
		c, ok := checks.Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			for b.Loop() {
				fs, err := c.Run(&check.Context{Snapshot: s})
				if err != nil {
					b.Fatal(err)
				}
				if msg := want(id, fs); msg != "" {
					b.Fatal(msg)
				}
			}
		})
	}
}
