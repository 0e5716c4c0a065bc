package testcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
)

const (
	crdGroupKind = "CustomResourceDefinition.apiextensions.k8s.io"
	nsGroupKind  = "Namespace"
	fieldManager = "kubegap-testbed"
	opTimeout    = 2 * time.Minute
)

// ReadYAML parses Kubernetes objects from YAML or JSON files, without
// creating them: multi-document files and List kinds are flattened, empty
// documents skipped. It fails the test on a malformed document, naming the
// file and document index.
func ReadYAML(t testing.TB, files ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("testcluster: %v", err)
		}
		objs, err := decodeObjects(b)
		if err != nil {
			t.Fatalf("testcluster: %s: %v", f, err)
		}
		out = append(out, objs...)
	}
	return out
}

// decodeObjects splits a YAML or JSON stream into objects.
func decodeObjects(b []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: apiVersion and kind are required", i)
		}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			for j := range l.Items {
				out = append(out, &l.Items[j])
			}
			continue
		}
		out = append(out, u)
	}
}

// LoadYAML reads objects from files (see ReadYAML) and creates them (see
// Apply), returning what the server stored.
func (c *Cluster) LoadYAML(t testing.TB, files ...string) []*unstructured.Unstructured {
	t.Helper()
	return c.LoadYAMLInto(t, metav1.NamespaceDefault, files...)
}

// LoadYAMLInto is LoadYAML with namespaced objects that name no namespace
// put in ns, typically one from Namespace(t).
func (c *Cluster) LoadYAMLInto(t testing.TB, ns string, files ...string) []*unstructured.Unstructured {
	t.Helper()
	objs := ReadYAML(t, files...)
	return c.applyT(t, ns, objs)
}

// Apply creates objects of any kind as the admin and returns them as
// stored, status included. It creates CustomResourceDefinitions first and
// waits until they are established, then Namespaces, then the rest in the
// given order. Namespaces that namespaced objects need are created; a
// namespaced object without a namespace goes to "default" (LoadYAMLInto
// chooses another). An object that
// carries status has it written through the status subresource after
// create, since no controller will. An ownerReference naming an object of
// this call (or one already on the server) gets that object's real UID.
//
// An existing CRD or Namespace is reused; any other existing object fails
// the test. Namespaces this call creates are emptied and deleted at the
// end of the test, as are cluster-scoped objects it creates; CRDs stay for
// the rest of the package.
//
// objs may be *unstructured.Unstructured or typed objects such as
// *corev1.Node; the inputs are not modified.
func (c *Cluster) Apply(t testing.TB, objs ...runtime.Object) []*unstructured.Unstructured {
	t.Helper()
	us := make([]*unstructured.Unstructured, 0, len(objs))
	for i, o := range objs {
		u, err := toUnstructured(o)
		if err != nil {
			t.Fatalf("testcluster: object %d: %v", i, err)
		}
		us = append(us, u)
	}
	return c.applyT(t, metav1.NamespaceDefault, us)
}

func (c *Cluster) applyT(t testing.TB, defaultNS string, us []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	res, err := c.apply(ctx, defaultNS, us)
	// Register cleanups for whatever was created, even on failure.
	for _, a := range res {
		switch {
		case a.existed || a.groupKind == crdGroupKind:
		case a.groupKind == nsGroupKind:
			name := a.obj.GetName()
			t.Cleanup(func() { c.cleanupNamespace(t, name) })
		case !a.namespaced:
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				defer cancel()
				err := c.dynamic.Resource(a.gvr).Delete(ctx, a.obj.GetName(), metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("testcluster: deleting %s %s: %v", a.groupKind, a.obj.GetName(), err)
				}
			})
		}
	}
	if err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	var out []*unstructured.Unstructured
	for _, a := range res {
		if a.requested {
			out = append(out, a.obj)
		}
	}
	return out
}

// Namespace creates a namespace unique to the test and removes it, with
// everything in it, when the test ends.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	suffix, err := randomHex(3)
	if err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 50 {
		base = strings.TrimRight(base[:50], "-")
	}
	name := "t-" + base + "-" + suffix
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	c.Apply(t, ns)
	return name
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// applied is one object Apply handled.
type applied struct {
	obj        *unstructured.Unstructured
	gvr        schema.GroupVersionResource
	groupKind  string
	namespaced bool
	existed    bool // a CRD or Namespace that was already there
	requested  bool // passed in by the caller, not created on the side
}

func (c *Cluster) apply(ctx context.Context, defaultNS string, objs []*unstructured.Unstructured) ([]applied, error) {
	var crds, nss, rest []*unstructured.Unstructured
	for _, o := range objs {
		o = o.DeepCopy()
		stripServerFields(o)
		switch o.GroupVersionKind().GroupKind().String() {
		case crdGroupKind:
			crds = append(crds, o)
		case nsGroupKind:
			nss = append(nss, o)
		default:
			rest = append(rest, o)
		}
	}
	var done []applied
	uids := map[string]types.UID{}
	for _, o := range crds {
		a, err := c.create(ctx, o, uids)
		if err != nil {
			return done, err
		}
		done = append(done, a)
	}
	if len(crds) > 0 {
		for _, o := range crds {
			if err := c.waitEstablished(ctx, o.GetName()); err != nil {
				return done, err
			}
		}
		c.mapper.Reset()
	}
	seen := map[string]bool{}
	for _, o := range nss {
		a, err := c.create(ctx, o, uids)
		if err != nil {
			return done, err
		}
		seen[o.GetName()] = true
		done = append(done, a)
	}
	for _, o := range rest {
		m, err := c.mapping(ctx, o)
		if err != nil {
			return done, err
		}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if o.GetNamespace() == "" {
				o.SetNamespace(defaultNS)
			}
			if ns := o.GetNamespace(); !seen[ns] {
				seen[ns] = true
				a, err := c.ensureNamespace(ctx, ns)
				if err != nil {
					return done, err
				}
				if !a.existed {
					done = append(done, a)
				}
			}
		}
		a, err := c.create(ctx, o, uids)
		if err != nil {
			return done, err
		}
		done = append(done, a)
	}
	return done, nil
}

// create creates one object, then writes its status.
func (c *Cluster) create(ctx context.Context, o *unstructured.Unstructured, uids map[string]types.UID) (applied, error) {
	gk := o.GroupVersionKind().GroupKind().String()
	what := fmt.Sprintf("%s %s", gk, objName(o))
	m, err := c.mapping(ctx, o)
	if err != nil {
		return applied{}, err
	}
	a := applied{gvr: m.Resource, groupKind: gk, requested: true,
		namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
	if err := c.fixOwnerUIDs(ctx, o, uids); err != nil {
		return a, fmt.Errorf("%s: %w", what, err)
	}
	var ri dynamic.ResourceInterface = c.dynamic.Resource(m.Resource)
	if a.namespaced {
		ri = c.dynamic.Resource(m.Resource).Namespace(o.GetNamespace())
	}
	status, hasStatus := o.Object["status"]
	got, err := ri.Create(ctx, o, metav1.CreateOptions{FieldManager: fieldManager})
	if apierrors.IsAlreadyExists(err) && (gk == crdGroupKind || gk == nsGroupKind) {
		got, err = ri.Get(ctx, o.GetName(), metav1.GetOptions{})
		a.existed = true
		hasStatus = false
	}
	if err != nil {
		return a, fmt.Errorf("creating %s: %w", what, err)
	}
	a.obj = got
	uids[ownerKey(got.GetAPIVersion(), got.GetKind(), got.GetNamespace(), got.GetName())] = got.GetUID()
	if !hasStatus {
		return a, nil
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return a, fmt.Errorf("encoding status of %s: %w", what, err)
	}
	patched, err := ri.Patch(ctx, o.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}, "status")
	switch {
	case err == nil:
		a.obj = patched
	case apierrors.IsNotFound(err):
		// No status subresource (a CRD without one): create stored the
		// status with the object.
	default:
		return a, fmt.Errorf("writing status of %s: %w", what, err)
	}
	return a, nil
}

// ensureNamespace creates namespace ns unless it exists.
func (c *Cluster) ensureNamespace(ctx context.Context, ns string) (applied, error) {
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	a, err := c.create(ctx, o, map[string]types.UID{})
	a.requested = false
	return a, err
}

// mapping resolves an object's kind to its resource, refreshing discovery
// when the kind is new (a CRD established a moment ago).
func (c *Cluster) mapping(ctx context.Context, o *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := o.GroupVersionKind()
	for {
		m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			return m, nil
		}
		if !meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("mapping %s: %w", gvk, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the server does not serve %s (create its CRD first): %w", gvk, err)
		case <-time.After(250 * time.Millisecond):
			c.mapper.Reset()
		}
	}
}

// waitEstablished waits for a CRD's Established condition.
func (c *Cluster) waitEstablished(ctx context.Context, name string) error {
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for {
		crd, err := c.dynamic.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, ci := range conds {
				cm, _ := ci.(map[string]any)
				if cm["type"] == "Established" && cm["status"] == "True" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w (last get: %v)", name, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// fixOwnerUIDs points ownerReferences at the real owners: fixtures carry
// UIDs from another cluster, or none.
func (c *Cluster) fixOwnerUIDs(ctx context.Context, o *unstructured.Unstructured, uids map[string]types.UID) error {
	refs := o.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	for i, r := range refs {
		if uid, ok := uids[ownerKey(r.APIVersion, r.Kind, o.GetNamespace(), r.Name)]; ok {
			refs[i].UID = uid
			continue
		}
		if uid, ok := uids[ownerKey(r.APIVersion, r.Kind, "", r.Name)]; ok {
			refs[i].UID = uid
			continue
		}
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err != nil {
			return fmt.Errorf("ownerReference %s: %w", r.Name, err)
		}
		m, err := c.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: r.Kind}, gv.Version)
		if err != nil {
			continue // the server rejects a bad owner itself
		}
		var ri dynamic.ResourceInterface = c.dynamic.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = c.dynamic.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if owner, err := ri.Get(ctx, r.Name, metav1.GetOptions{}); err == nil {
			refs[i].UID = owner.GetUID()
		}
	}
	o.SetOwnerReferences(refs)
	return nil
}

// cleanupNamespace empties and deletes a namespace. With no namespace
// controller running, deleting a namespace alone leaves it Terminating and
// its objects in place forever, so this does the controller's work.
func (c *Cluster) cleanupNamespace(t testing.TB, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := c.deleteNamespace(ctx, ns); err != nil {
		t.Errorf("testcluster: removing namespace %s: %v", ns, err)
	}
}

func (c *Cluster) deleteNamespace(ctx context.Context, ns string) error {
	lists, err := c.discovery.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return fmt.Errorf("discovering namespaced resources: %w", err)
	}
	zero := int64(0)
	// Grace 0: no kubelet will confirm a bound pod's graceful deletion.
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	var errs []error
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "deletecollection") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			err := c.dynamic.Resource(gvr).Namespace(ns).DeleteCollection(ctx, del, metav1.ListOptions{})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
				errs = append(errs, fmt.Errorf("deleting %s: %w", gvr.Resource, err))
			}
		}
	}
	nsc := c.clients[UserAdmin].CoreV1().Namespaces()
	if err := nsc.Delete(ctx, ns, del); err != nil && !apierrors.IsNotFound(err) {
		return errors.Join(append(errs, err)...)
	}
	// Clear the "kubernetes" finalizer the namespace controller would
	// remove, then delete again so the server drops it.
	got, err := nsc.Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return errors.Join(errs...)
	}
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	got.Spec.Finalizers = nil
	if _, err := nsc.Finalize(ctx, got, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return errors.Join(append(errs, fmt.Errorf("finalizing: %w", err))...)
	}
	if err := nsc.Delete(ctx, ns, del); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// stripServerFields drops the metadata a server assigns, so that objects
// exported from a cluster (kubectl get -o yaml) can be created again.
func stripServerFields(o *unstructured.Unstructured) {
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields",
		"generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(o.Object, "metadata", f)
	}
}

// toUnstructured converts a typed or unstructured object, filling in the
// kind of a typed object that lacks TypeMeta from client-go's scheme.
func toUnstructured(o runtime.Object) (*unstructured.Unstructured, error) {
	if o == nil {
		return nil, errors.New("nil object")
	}
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", o, err)
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		gvks, _, err := scheme.Scheme.ObjectKinds(o)
		if err != nil || len(gvks) == 0 {
			return nil, fmt.Errorf("kind of %T unknown; set apiVersion and kind: %w", o, err)
		}
		u.SetGroupVersionKind(gvks[0])
	}
	return u, nil
}

func ownerKey(apiVersion, kind, ns, name string) string {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return gv.Group + "/" + kind + "/" + ns + "/" + name
}

func objName(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}
