// Package synthsnap writes the snapshot of a bench/loadgen cluster
// without an API server, streaming, for bench/cmd/synth and the scaling
// benchmark: see Write.
package synthsnap

import (
	"fmt"
	"path/filepath"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubegap/kubegap/bench/loadgen"
	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Write generates the cluster of spec (loadgen.Generate) and writes every
// object a live audit of all checks reads, as the live reader would keep
// it (Warning events only, as its field selector asks): to the snapshot
// out when not empty, and whole, untrimmed, as one kubectl-style YAML
// List to yamlOut when not empty. Each object is written as it is made,
// so memory stays bounded at any size.
func Write(spec loadgen.Spec, out, yamlOut string) error {
	read := map[snapshot.Resource]bool{}
	for _, r := range audit.Resources(checks.All()) {
		if _, _, ok := snapshot.ListKind(r); ok {
			read[r] = true
		}
	}
	var yl *yamlList
	if yamlOut != "" {
		var err error
		if yl, err = newYAMLList(yamlOut); err != nil {
			return err
		}
		defer yl.abort()
	}
	var sw *snapshot.StreamWriter
	if out != "" {
		// Temporary files beside the output: /tmp may be a small tmpfs.
		sw = snapshot.NewStreamWriter(snapshot.Source{Type: snapshot.SourceCluster, ServerVersion: "v1.37.2"}, filepath.Dir(out))
		defer sw.Close()
	}
	err := loadgen.Generate(spec, func(o runtime.Object) error {
		r, ok := resourceOf(o)
		if !ok {
			return fmt.Errorf("loadgen generated a %T, which synth does not know", o)
		}
		if !read[r] {
			return nil // no check reads it, so no live audit would
		}
		if e, ok := o.(*corev1.Event); ok && e.Type != corev1.EventTypeWarning {
			return nil
		}
		if yl != nil {
			// Before Add, which trims the object in place.
			if err := yl.add(r, o); err != nil {
				return err
			}
		}
		if sw != nil {
			return sw.Add(r, o)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if yl != nil {
		if err := yl.close(); err != nil {
			return err
		}
	}
	if sw == nil {
		return nil
	}
	for _, r := range audit.Resources(checks.All()) {
		// The generated cluster's API server had no client of a
		// deprecated version, so its /metrics is read and holds no
		// apiserver_requested_deprecated_apis series.
		if read[r] || r.NonResourceURL != "" {
			sw.SetCoverage(r, snapshot.StatusRead, "")
		} else {
			sw.SetCoverage(r, snapshot.StatusNotServed, "")
		}
	}
	return sw.SaveFile(out)
}

// resourceOf is the resource of one object loadgen generates.
func resourceOf(o runtime.Object) (snapshot.Resource, bool) {
	switch o.(type) {
	case *corev1.Namespace:
		return snapshot.Namespaces, true
	case *corev1.Node:
		return snapshot.Nodes, true
	case *corev1.Pod:
		return snapshot.Pods, true
	case *corev1.Event:
		return snapshot.Events, true
	case *corev1.Service:
		return snapshot.Services, true
	case *appsv1.DaemonSet:
		return snapshot.DaemonSets, true
	case *appsv1.Deployment:
		return snapshot.Deployments, true
	case *appsv1.ReplicaSet:
		return snapshot.ReplicaSets, true
	case *appsv1.StatefulSet:
		return snapshot.StatefulSets, true
	case *policyv1.PodDisruptionBudget:
		return snapshot.PodDisruptionBudgets, true
	case *discoveryv1.EndpointSlice:
		return snapshot.EndpointSlices, true
	case *admissionv1.ValidatingWebhookConfiguration:
		return snapshot.ValidatingWebhookConfigurations, true
	case *admissionv1.MutatingWebhookConfiguration:
		return snapshot.MutatingWebhookConfigurations, true
	}
	return snapshot.Resource{}, false
}
