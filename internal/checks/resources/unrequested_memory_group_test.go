package resources

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBareGroupsAsGrouper: poolTally.addBare groups the pods asking for no
// memory by container name exactly as finding.Grouper grouped them by
// their fields (same order, fields, objects, cap and count beyond it), and
// ownerKey.String is the key ownerOf joined per pod before, on the
// fixtures' pods and on 300 generated pods in three containers (more than
// finding.MaxItemObjects in one group).
func TestBareGroupsAsGrouper(t *testing.T) {
	var pods []snapshot.Pod
	for _, file := range []string{"unrequested-memory/gap.yaml", "unrequested-memory/clean.yaml"} {
		pods = append(pods, checktest.Load(t, file).Pods...)
	}
	yes := true
	for i := range 300 {
		p := snapshot.Pod{}
		p.Own()
		p.Namespace, p.Name = fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("p-%d", i)
		if i%2 == 0 {
			p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet",
				Name: fmt.Sprintf("rs-%d", i%11), Controller: &yes})
		}
		p.Spec.Own()
		p.Spec.Containers = []snapshot.Container{{Name: []string{"app", "sidecar", "x"}[i%3]}}
		pods = append(pods, p)
	}
	var old finding.Grouper
	var t1 poolTally
	grouped := 0
	for i := range pods {
		p := &pods[i]
		c, ok := asksNoMemory(p)
		if !ok {
			continue
		}
		grouped++
		ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		res := check.ContainerField("Pod", "", c, "resources.")
		old.Add(ref, finding.Absent(res+"requests.memory"), finding.Absent(res+"limits.memory"))
		t1.addBare(ref, c)
		if got, want := ownerOf(p).String(), oldOwnerOf(p); got != want {
			t.Errorf("pod %s/%s: owner %q, want %q", p.Namespace, p.Name, got, want)
		}
	}
	if grouped < 300 {
		t.Fatalf("only %d pods ask for no memory", grouped)
	}
	if !reflect.DeepEqual(t1.bare, old.Items()) {
		t.Errorf("groups\n%v\nwant\n%v", t1.bare, old.Items())
	}
}

// oldOwnerOf is ownerOf as it was, joining per pod.
func oldOwnerOf(p *snapshot.Pod) string {
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return strings.Join([]string{p.Namespace, o.APIVersion, o.Kind, o.Name}, "|")
		}
	}
	return strings.Join([]string{p.Namespace, "v1", "Pod", p.Name}, "|")
}
