package audit_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestRBACCommandGrantsWhatTheAuditReads: what `kubegap rbac` prints,
// applied by kubectl as the admin, lets a service account bound by it
// audit the whole cluster (and, with --namespace, one namespace) with
// nothing forbidden: the command is the whole of the access an audit needs.
func TestRBACCommandGrantsWhatTheAuditReads(t *testing.T) {
	c := loadDemo(t)
	ns := c.Namespace(t)
	admin := c.Client(t, testcluster.UserAdmin)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		scope []string // kubegap rbac and audit flags
	}{
		{"cluster", nil},
		{"namespace", []string{"-n", "payments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sa := "kubegap-rbac-" + tc.name
			if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			r := run(t, append([]string{"rbac", "--service-account", ns + "/" + sa}, tc.scope...)...)
			if r.code != 0 {
				t.Fatalf("kubegap rbac: exit %d: %s", r.code, r.stderr)
			}
			// The bindings are cluster objects (and, with a namespace,
			// a Role in a namespace the test does not own): remove them.
			t.Cleanup(func() {
				for _, n := range []string{"kubegap-reader", "kubegap-reader-cluster"} {
					_ = admin.RbacV1().ClusterRoleBindings().Delete(ctx, n, metav1.DeleteOptions{})
				}
				_ = admin.RbacV1().RoleBindings("payments").Delete(ctx, "kubegap-reader", metav1.DeleteOptions{})
				_ = admin.RbacV1().Roles("payments").Delete(ctx, "kubegap-reader", metav1.DeleteOptions{})
				_ = admin.RbacV1().ClusterRoles().Delete(ctx, "kubegap-reader-cluster", metav1.DeleteOptions{})
			})
			apply := exec.Command(c.Kubectl(), "--kubeconfig", c.Kubeconfig(t, testcluster.UserAdmin), "apply", "-f", "-")
			apply.Stdin = strings.NewReader(r.stdout)
			if out, err := apply.CombinedOutput(); err != nil {
				t.Fatalf("kubectl apply of kubegap rbac's output: %v\n%s", err, out)
			}
			tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := clientcmd.LoadFromFile(c.Kubeconfig(t, testcluster.UserAdmin))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range cfg.AuthInfos {
				a.Token, a.ClientCertificateData, a.ClientKeyData = tok.Status.Token, nil, nil
			}
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
				t.Fatal(err)
			}
			// RBAC takes effect as the authorizer's cache sees the
			// bindings: ask until the service account may list pods.
			user := "system:serviceaccount:" + ns + ":" + sa
			waitAllowed(t, c, user, tc.scope)
			audit := run(t, append([]string{"audit", "--kubeconfig", kc, "-o", "json"}, tc.scope...)...)
			if audit.code == 2 {
				t.Fatalf("audit as %s: exit 2: %s", user, audit.stderr)
			}
			rep, _ := decode(t, audit)
			if len(rep.Coverage) == 0 {
				t.Fatal("the report has no coverage")
			}
			for _, cov := range rep.Coverage {
				if cov.Status == "forbidden" || cov.Status != "read" && cov.Status != "not-served" {
					t.Errorf("as %s bound by kubegap rbac %v: %s %s %s", user, tc.scope, cov.Resource, cov.Status, cov.Message)
				}
			}
		})
	}
}

func waitAllowed(t *testing.T, c *testcluster.Cluster, user string, scope []string) {
	t.Helper()
	ns := ""
	if len(scope) == 2 {
		ns = scope[1]
	}
	sar := c.Client(t, testcluster.UserAdmin).AuthorizationV1().SubjectAccessReviews()
	for i := 0; ; i++ {
		got, err := sar.Create(context.Background(), &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:serviceaccounts"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: ns}}}, metav1.CreateOptions{})
		if err == nil && got.Status.Allowed {
			return
		}
		if i == 100 {
			t.Fatalf("%s still may not list pods: %v %+v", user, err, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
