package cluster

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestReadOnlyRefusesWrites sends every kind of write through a real
// client-go clientset at a server that counts what reaches it: none may.
func TestReadOnlyRefusesWrites(t *testing.T) {
	var writes, gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`))
			return
		}
		writes.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	cs, err := kubernetes.NewForConfig(ReadOnly(&rest.Config{Host: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}
	attempts := map[string]func() error{
		"POST": func() error {
			_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
			return err
		},
		"PUT": func() error {
			_, err := cs.CoreV1().Pods("default").Update(ctx, pod, metav1.UpdateOptions{})
			return err
		},
		"PATCH": func() error {
			_, err := cs.CoreV1().Pods("default").Patch(ctx, "p", "application/merge-patch+json", []byte(`{}`), metav1.PatchOptions{})
			return err
		},
		"DELETE": func() error { return cs.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}) },
		"DELETE collection": func() error {
			return cs.CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		"POST eviction": func() error {
			return cs.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}})
		},
	}
	for name, do := range attempts {
		err := do()
		var refused *ErrWriteRefused
		if !errors.As(err, &refused) {
			t.Errorf("%s: got %v, want ErrWriteRefused", name, err)
		}
	}
	if n := writes.Load(); n != 0 {
		t.Fatalf("%d write requests reached the server", n)
	}
	if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("GET was refused: %v", err)
	}
	if gets.Load() == 0 {
		t.Fatal("the GET never reached the server")
	}
}
