package objects

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	crSizeID    = "custom-resource-size"
	ruleCRSize  = "object-size-against-request-limit"
	caseArgoCRs = "argocd-application-status-exceeds-etcd-request-limit-2023-2025"
)

// Policy, not fact: the shares of etcd's default request limit at which
// the check speaks (512 KiB and 1 MiB of its 1.5 MiB). A controller's write
// carries the whole object plus what it adds (the deployKF Application
// failed while Argo CD patched in an operation state), so the check speaks
// well before the stored object reaches the limit.
const (
	crSizeWarn = 1.0 / 3
	crSizeHigh = 2.0 / 3
)

//go:embed data/custom-resource-size.yaml
var crSizeFactsYAML []byte

type sizeLimit struct {
	Name    string   `json:"name"`
	Bytes   int64    `json:"bytes"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
}

type sizeLimits struct {
	Limits []sizeLimit `json:"limits"`

	byName map[string]sizeLimit
}

var loadSizeLimits = check.Facts("custom resource size limits", crSizeFactsYAML, func(f *sizeLimits) error {
	f.byName = map[string]sizeLimit{}
	for _, l := range f.Limits {
		if l.Bytes <= 0 || len(l.Sources) == 0 {
			return errors.New("custom resource size limits: " + l.Name + " needs bytes and sources")
		}
		f.byName[l.Name] = l
	}
	for _, need := range []string{"etcd-max-request", "apiserver-max-request-body"} {
		if _, ok := f.byName[need]; !ok {
			return errors.New("custom resource size limits: missing " + need)
		}
	}
	return nil
})

func customResourceSizeCheck() check.Check {
	return check.Check{
		ID:       crSizeID,
		Title:    "Custom resources close to the size limit of one write",
		Severity: finding.High,
		Description: "Reads the size of every custom resource in the snapshot as it was served, before trimming (the loader and the " +
			"collector record it in the " + snapshot.AnnotationSerializedBytes + " annotation), and reports one whose JSON is " +
			"above a third of etcd's default 1.5 MiB request limit (medium) or two thirds of it (high). Once an update of " +
			"the object is larger than etcd accepts (\"etcdserver: request is too large\") " +
			"or than the API server's 3 MiB request body, the controller that owns the object cannot record its work: Argo CD " +
			"Applications, which keep every managed resource's status and a history of syncs, and ApplicationSets, which list " +
			"every generated Application, stop syncing. The rule's silence rests on Argo CD's Applications and ApplicationSets " +
			"being read whole; other custom resources the snapshot holds are judged too. An object without a recorded size " +
			"(one from a snapshot saved by an older kubegap) leaves the rule partial: an unknown size is never a small one. " +
			"A cluster whose etcd runs with a raised --max-request-bytes has more room than the check assumes.",
		Reads: []check.Input{
			check.Optional(snapshot.ArgoApplications),
			check.Optional(snapshot.ArgoApplicationSets),
		},
		Rules: []check.Rule{{ID: ruleCRSize, Summary: "no custom resource is above a third of etcd's default request limit",
			Needs: []snapshot.Resource{snapshot.ArgoApplications, snapshot.ArgoApplicationSets}}},
		Cases: check.Prevents(caseArgoCRs),
		Run:   runCustomResourceSize,
	}
}

// notCustom are the kinds kubegap reads as unstructured objects that are
// not custom resources: the CRDs themselves (a vendor's fixed schema, not a
// record that grows as Argo CD's Applications do), APIServices, LimitRanges
// and CertificateSigningRequests.
var notCustom = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range []snapshot.Resource{snapshot.CustomResourceDefinitions, snapshot.APIServices, snapshot.LimitRanges,
		snapshot.CertificateSigningRequests} {
		m[r.APIVersion()+"/"+r.Kind] = true
	}
	return m
}()

func runCustomResourceSize(ctx *check.Context) ([]finding.Finding, error) {
	limits, err := loadSizeLimits()
	if err != nil {
		return nil, err
	}
	etcd, api := limits.byName["etcd-max-request"], limits.byName["apiserver-max-request-body"]
	s := ctx.Snapshot
	keys := make([]string, 0, len(s.Custom))
	for k := range s.Custom {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []finding.Finding
	var unknown []string
	for _, key := range keys {
		if notCustom[key] {
			continue
		}
		i := strings.LastIndex(key, "/")
		apiVersion, kind := key[:i], key[i+1:]
		for j := range s.Custom[key] {
			u := &s.Custom[key][j]
			n, ok := snapshot.SerializedBytes(u)
			if !ok {
				unknown = append(unknown, kind+" "+objectKey(u))
				continue
			}
			share := float64(n) / float64(etcd.Bytes)
			if share < crSizeWarn {
				continue
			}
			out = append(out, crSizeFinding(apiVersion, kind, u, n, share, etcd, api))
		}
	}
	if len(unknown) > 0 {
		ctx.Incomplete(ruleCRSize, "custom resources without a recorded size (%d: %s): they were read from a snapshot saved "+
			"before kubegap recorded sizes, so how close they are to the limit is unknown", len(unknown), check.ListText(unknown, 5))
	}
	return out, nil
}

func objectKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

func crSizeFinding(apiVersion, kind string, u *unstructured.Unstructured, n int64, share float64, etcd, api sizeLimit) finding.Finding {
	sev := finding.Medium
	if share >= crSizeHigh {
		sev = finding.High
	}
	ref := check.Ref(apiVersion, kind, u)
	name := kind + " " + objectKey(u)
	f := finding.Finding{
		Check:    crSizeID,
		Severity: sev,
		Title:    fmt.Sprintf("%s is %s, %d%% of etcd's default request limit", name, kib(n), int(share*100)),
		Message: fmt.Sprintf("%s was %s when read. etcd refuses a request above %s by default and the API server one above %s; "+
			"an update that crosses either fails, so the controller that owns the object can no longer record its status, "+
			"and for Argo CD the sync does not finish. Objects that keep per-item status (an Application's status.resources, "+
			"its status.history, an ApplicationSet's list of Applications) grow with ordinary use until one write fails.",
			name, kib(n), kib(etcd.Bytes), kib(api.Bytes)),
		Objects: []finding.ObjectRef{ref},
		Remediation: "Find what fills the object (kubectl get -o json | jq 'to_entries | map({key, size: (.value|tostring|length)})' " +
			"on it and on its status). For Argo CD: lower spec.revisionHistoryLimit (history entries keep rendered values), " +
			"split an Application that manages thousands of resources, and on ApplicationSets cap status.resources with " +
			"ARGOCD_APPLICATIONSET_CONTROLLER_MAX_RESOURCES_STATUS_COUNT. Raise etcd's --max-request-bytes only where you run etcd, " +
			"and alert on object size well below the limit.",
		Cases: []string{caseArgoCRs},
	}
	f.AddEvidence(finding.Quote(ref, finding.Value("metadata.annotations["+snapshot.AnnotationSerializedBytes+"]", strconv.FormatInt(n, 10))))
	if strings.HasPrefix(apiVersion, snapshot.ArgoApplications.Group+"/") && kind == snapshot.ArgoApplications.Kind {
		if h, found, _ := unstructured.NestedInt64(u.Object, "spec", "revisionHistoryLimit"); found {
			f.AddEvidence(finding.Quote(ref, finding.Value("spec.revisionHistoryLimit", h)))
		} else {
			f.AddEvidence(finding.Quote(ref, finding.Absent("spec.revisionHistoryLimit")))
			f.Evidence = append(f.Evidence, "spec.revisionHistoryLimit is not set: Argo CD then keeps 10 history entries, each with the rendered values (https://github.com/deployKF/deployKF/issues/224)")
		}
	}
	for _, l := range []sizeLimit{etcd, api} {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s)", strings.Join(strings.Fields(l.Fact), " "), strings.Join(l.Sources, ", ")))
	}
	return f
}

// kib is a size in KiB with its bytes.
func kib(n int64) string {
	return fmt.Sprintf("%.0f KiB (%d bytes)", float64(n)/1024, n)
}
