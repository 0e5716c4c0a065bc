package snapshot

import (
	"fmt"
	"math"
	"slices"
	"strings"

	json "github.com/go-json-experiment/json"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// OriginalAPIVersionAnnotation marks an object read from a group/version
// that Kubernetes served once and has removed (extensions/v1beta1
// DaemonSets, policy/v1beta1 PodDisruptionBudgets, ...). Such an object is
// kept as its current type, with the version it was written in here: the
// old version's defaults and meanings differ, and the loader has applied
// them (see legacyVersions), but a check may still want to say where a
// value came from.
const OriginalAPIVersionAnnotation = "kubegap.dev/original-api-version"

// OriginalAPIVersion is the removed group/version an object was written
// in, or "" when it was read in the version it is kept as.
func OriginalAPIVersion(m metav1.Object) string {
	return m.GetAnnotations()[OriginalAPIVersionAnnotation]
}

// legacyVersion is a served-then-removed group/version of a typed kind:
// read as res, after convert, or refused with refusal.
type legacyVersion struct {
	apiVersion, kind string
	res              Resource
	// convert applies to the object decoded as res's type what the API
	// server does when it stores the old version and serves it as the
	// current one: the old version's defaults where they differ from the
	// current version's, and its conversion. raw is the object as read.
	convert func(obj any, raw []byte) error
	// refusal: the version never served the kind, or it cannot be read.
	refusal string
}

// legacyVersions are the removed versions of the kinds checks read, with
// what the API server did with them. Sources: the defaulting and
// conversion functions of k8s.io/kubernetes v1.37.2, pkg/apis/{extensions,
// apps,policy,admissionregistration,discovery}/v1beta1 (and apps/v1beta2),
// compared with the v1 defaults in the same tree; which kinds each version
// served: the types of k8s.io/api v0.37.2.
var legacyVersions = []legacyVersion{
	{apiVersion: "extensions/v1beta1", kind: "DaemonSet", res: DaemonSets, convert: extensionsDaemonSet},
	{apiVersion: "extensions/v1beta1", kind: "Deployment", res: Deployments, convert: extensionsDeployment},
	{apiVersion: "extensions/v1beta1", kind: "ReplicaSet", res: ReplicaSets, convert: extensionsReplicaSet},
	{apiVersion: "apps/v1beta1", kind: "Deployment", res: Deployments, convert: appsV1beta1Deployment},
	{apiVersion: "apps/v1beta1", kind: "StatefulSet", res: StatefulSets, convert: appsV1beta1StatefulSet},
	{apiVersion: "apps/v1beta1", kind: "DaemonSet", res: DaemonSets,
		refusal: "apps/v1beta1 never served DaemonSets (they were served as extensions/v1beta1, apps/v1beta2 and apps/v1)"},
	{apiVersion: "apps/v1beta1", kind: "ReplicaSet", res: ReplicaSets,
		refusal: "apps/v1beta1 never served ReplicaSets (they were served as extensions/v1beta1, apps/v1beta2 and apps/v1)"},
	// apps/v1beta2 defaults as apps/v1 does and requires a selector.
	{apiVersion: "apps/v1beta2", kind: "DaemonSet", res: DaemonSets, convert: noConversion},
	{apiVersion: "apps/v1beta2", kind: "Deployment", res: Deployments, convert: noConversion},
	{apiVersion: "apps/v1beta2", kind: "ReplicaSet", res: ReplicaSets, convert: noConversion},
	{apiVersion: "apps/v1beta2", kind: "StatefulSet", res: StatefulSets, convert: noConversion},
	{apiVersion: "policy/v1beta1", kind: "PodDisruptionBudget", res: PodDisruptionBudgets, convert: policyV1beta1PDB},
	{apiVersion: "admissionregistration.k8s.io/v1beta1", kind: "ValidatingWebhookConfiguration",
		res: ValidatingWebhookConfigurations, convert: v1beta1ValidatingWebhooks},
	{apiVersion: "admissionregistration.k8s.io/v1beta1", kind: "MutatingWebhookConfiguration",
		res: MutatingWebhookConfigurations, convert: v1beta1MutatingWebhooks},
	{apiVersion: "discovery.k8s.io/v1beta1", kind: "EndpointSlice", res: EndpointSlices, convert: discoveryV1beta1EndpointSlice},
}

// resolveTyped finds the typed resource an object of apiVersion and kind
// is read as. legacy is nil for the current version. ok is false for
// kinds that are not typed resources (custom or unknown ones, kept as
// they are). A typed kind in a version that is neither current nor a
// known removed one is an error naming the versions that are read: read
// as the current version, its fields could mean something else.
func resolveTyped(apiVersion, kind string) (r Resource, legacy *legacyVersion, ok bool, err error) {
	for i := range legacyVersions {
		lv := &legacyVersions[i]
		if lv.apiVersion == apiVersion && lv.kind == kind {
			if lv.refusal != "" {
				return Resource{}, nil, false, fmt.Errorf("%s %s: %s", apiVersion, kind, lv.refusal)
			}
			return lv.res, lv, true, nil
		}
	}
	r, ok = ByGroupKind(groupOf(apiVersion), kind)
	if !ok || r.Custom {
		return Resource{}, nil, false, nil
	}
	if apiVersion != r.APIVersion() && keptAsWritten[apiVersion+"/"+kind] {
		// Served once (or still, like autoscaling/v1), but not converted:
		// kept as written, for the removed-API check, and not counted as r.
		return Resource{}, nil, false, nil
	}
	if apiVersion != r.APIVersion() {
		return Resource{}, nil, false, fmt.Errorf("%s %s is not a version kubegap reads: it reads %ss as %s",
			apiVersion, kind, kind, strings.Join(readVersions(r), ", "))
	}
	return r, nil, true, nil
}

// keptAsWritten are other versions, served by Kubernetes at some release,
// of kinds kubegap reads: their fields differ enough that reading them as
// the current type could mislead a check (an Ingress backend's serviceName,
// an HPA's metrics), so they are kept as unstructured objects under their
// own apiVersion. The removed-API check reads them; the kind's other checks
// do not, and its coverage does not count them. Source: the Deprecated API
// Migration Guide (https://kubernetes.io/docs/reference/using-api/deprecation-guide/).
var keptAsWritten = map[string]bool{
	"extensions/v1beta1/Ingress":                           true,
	"networking.k8s.io/v1beta1/Ingress":                    true,
	"networking.k8s.io/v1beta1/IngressClass":               true,
	"extensions/v1beta1/NetworkPolicy":                     true,
	"batch/v1beta1/CronJob":                                true,
	"autoscaling/v1/HorizontalPodAutoscaler":               true,
	"autoscaling/v2beta1/HorizontalPodAutoscaler":          true,
	"autoscaling/v2beta2/HorizontalPodAutoscaler":          true,
	"rbac.authorization.k8s.io/v1beta1/ClusterRole":        true,
	"rbac.authorization.k8s.io/v1beta1/ClusterRoleBinding": true,
	"rbac.authorization.k8s.io/v1beta1/Role":               true,
	"rbac.authorization.k8s.io/v1beta1/RoleBinding":        true,
	"storage.k8s.io/v1beta1/StorageClass":                  true,
	"storage.k8s.io/v1beta1/CSIDriver":                     true,
}

// readVersions lists the versions r is read from, current first.
func readVersions(r Resource) []string {
	out := []string{r.APIVersion()}
	for _, lv := range legacyVersions {
		if lv.res == r && lv.refusal == "" && !slices.Contains(out, lv.apiVersion) {
			out = append(out, lv.apiVersion)
		}
	}
	return out
}

// apply converts an object decoded from lv's version and records that
// version on it. A nil lv (the current version) does nothing.
func (lv *legacyVersion) apply(obj any, raw []byte) error {
	if lv == nil {
		return nil
	}
	if err := lv.convert(obj, raw); err != nil {
		return err
	}
	markLegacy(obj.(metav1.Object), lv.apiVersion)
	return nil
}

// markLegacy records the version an object was written in.
func markLegacy(m metav1.Object, apiVersion string) {
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[OriginalAPIVersionAnnotation] = apiVersion
	m.SetAnnotations(a)
}

func noConversion(any, []byte) error { return nil }

// selectorFromTemplate is the v1beta1 defaulting of a workload's selector
// and labels from its pod template's labels; v1 requires a selector.
func selectorFromTemplate(sel **metav1.LabelSelector, labels *map[string]string, template map[string]string) {
	if template == nil {
		return
	}
	if *sel == nil {
		*sel = &metav1.LabelSelector{MatchLabels: template}
	}
	if len(*labels) == 0 {
		*labels = template
	}
}

func extensionsDaemonSet(obj any, _ []byte) error {
	d := obj.(*appsv1.DaemonSet)
	selectorFromTemplate(&d.Spec.Selector, &d.Labels, d.Spec.Template.Labels)
	// extensions/v1beta1 replaced pods only when deleted by hand; v1
	// rolls them.
	if d.Spec.UpdateStrategy.Type == "" {
		d.Spec.UpdateStrategy.Type = appsv1.OnDeleteDaemonSetStrategyType
	}
	return nil
}

func extensionsDeployment(obj any, _ []byte) error {
	d := obj.(*appsv1.Deployment)
	selectorFromTemplate(&d.Spec.Selector, &d.Labels, d.Spec.Template.Labels)
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	// One pod at a time either way, where v1 takes 25%.
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate != nil {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptrTo(intstr.FromInt32(1))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptrTo(intstr.FromInt32(1))
		}
	}
	// No deadline and every old ReplicaSet kept, where v1 has 600 s and 10.
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptrTo(int32(math.MaxInt32))
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptrTo(int32(math.MaxInt32))
	}
	return nil
}

func extensionsReplicaSet(obj any, _ []byte) error {
	rs := obj.(*appsv1.ReplicaSet)
	selectorFromTemplate(&rs.Spec.Selector, &rs.Labels, rs.Spec.Template.Labels)
	return nil
}

func appsV1beta1Deployment(obj any, _ []byte) error {
	d := obj.(*appsv1.Deployment)
	selectorFromTemplate(&d.Spec.Selector, &d.Labels, d.Spec.Template.Labels)
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptrTo(int32(2)) // v1: 10
	}
	return nil
}

func appsV1beta1StatefulSet(obj any, _ []byte) error {
	s := obj.(*appsv1.StatefulSet)
	selectorFromTemplate(&s.Spec.Selector, &s.Labels, s.Spec.Template.Labels)
	if s.Spec.UpdateStrategy.Type == "" {
		s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType // v1: RollingUpdate
	}
	return nil
}

// pdbV1beta1Label is the label key of the selectors the API server uses to
// carry a policy/v1beta1 budget's meaning into policy/v1.
const pdbV1beta1Label = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"

// policyV1beta1PDB converts a budget's selector as the API server does.
// In policy/v1beta1 an empty selector selects no pod, in policy/v1 every
// pod of the namespace: the server serves a v1beta1 "{}" in v1 as a
// selector that requires the label pdbV1beta1Label, which no pod carries,
// and the v1beta1 spelling of "all pods" (that label must not exist) as
// "{}". Checks then read the budget right without knowing its version.
func policyV1beta1PDB(obj any, _ []byte) error {
	p := obj.(*policyv1.PodDisruptionBudget)
	sel := p.Spec.Selector
	switch {
	case sel == nil:
	case len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0:
		p.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: pdbV1beta1Label, Operator: metav1.LabelSelectorOpExists}}}
	case len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 1 &&
		sel.MatchExpressions[0].Key == pdbV1beta1Label && sel.MatchExpressions[0].Operator == metav1.LabelSelectorOpDoesNotExist &&
		len(sel.MatchExpressions[0].Values) == 0:
		p.Spec.Selector = &metav1.LabelSelector{}
	default:
		// The label is the server's alone: never combined with the
		// user's requirements.
		sel.MatchExpressions = slices.DeleteFunc(sel.MatchExpressions,
			func(r metav1.LabelSelectorRequirement) bool { return r.Key == pdbV1beta1Label })
		if len(sel.MatchExpressions) == 0 {
			sel.MatchExpressions = nil
		}
	}
	return nil
}

// webhookV1beta1Defaults are admissionregistration.k8s.io/v1beta1's
// defaults where they differ from v1's: a webhook that fails is ignored
// (v1: the request is refused), waited for 30 s (v1: 10 s), matched only
// for the exact group/version of its rules (v1: equivalent ones too), of
// unknown side effects and spoken to in v1beta1 AdmissionReviews.
func webhookV1beta1Defaults(fp **admissionv1.FailurePolicyType, mp **admissionv1.MatchPolicyType,
	se **admissionv1.SideEffectClass, timeout **int32, reviews *[]string) {
	if *fp == nil {
		*fp = ptrTo(admissionv1.Ignore)
	}
	if *mp == nil {
		*mp = ptrTo(admissionv1.Exact)
	}
	if *se == nil {
		*se = ptrTo(admissionv1.SideEffectClassUnknown)
	}
	if *timeout == nil {
		*timeout = ptrTo(int32(30))
	}
	if len(*reviews) == 0 {
		*reviews = []string{"v1beta1"}
	}
}

func v1beta1ValidatingWebhooks(obj any, _ []byte) error {
	c := obj.(*admissionv1.ValidatingWebhookConfiguration)
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookV1beta1Defaults(&w.FailurePolicy, &w.MatchPolicy, &w.SideEffects, &w.TimeoutSeconds, &w.AdmissionReviewVersions)
	}
	return nil
}

func v1beta1MutatingWebhooks(obj any, _ []byte) error {
	c := obj.(*admissionv1.MutatingWebhookConfiguration)
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookV1beta1Defaults(&w.FailurePolicy, &w.MatchPolicy, &w.SideEffects, &w.TimeoutSeconds, &w.AdmissionReviewVersions)
	}
	return nil
}

// discoveryV1beta1EndpointSlice moves each endpoint's v1beta1 topology map
// where v1 keeps it: the zone into zone, the rest into deprecatedTopology,
// less a hostname equal to nodeName (the API server's conversion).
func discoveryV1beta1EndpointSlice(obj any, raw []byte) error {
	e := obj.(*discoveryv1.EndpointSlice)
	var old struct {
		Endpoints []struct {
			Topology map[string]string `json:"topology"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return fmt.Errorf("decoding EndpointSlice topology: %w", err)
	}
	for i := range e.Endpoints {
		if i >= len(old.Endpoints) || old.Endpoints[i].Topology == nil {
			continue
		}
		ep := &e.Endpoints[i]
		top := map[string]string{}
		for k, v := range old.Endpoints[i].Topology {
			top[k] = v
		}
		if zone, ok := top["topology.kubernetes.io/zone"]; ok {
			ep.Zone = &zone
			delete(top, "topology.kubernetes.io/zone")
		}
		if host, ok := top["kubernetes.io/hostname"]; ok && ep.NodeName != nil && host == *ep.NodeName {
			delete(top, "kubernetes.io/hostname")
		}
		if len(top) > 0 {
			ep.DeprecatedTopology = top
		}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
