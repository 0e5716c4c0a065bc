package checks

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// caseFixture is the cluster state a check–case link is shown on: for a
// prevents link the objects as they were before the incident's trigger,
// for a detects link the cluster while the incident was under way.
type caseFixture struct {
	// Files are paths under internal/checks (an area's fixtures live in
	// <area>/testdata), loaded together through the offline loader.
	Files []string
	// Complete reads the files as a whole-cluster read (checktest.Complete).
	Complete bool
	// Server is the API server's version (/version) the state had; Target
	// the --target-version the preflight judges, when the link needs one.
	Server, Target string
	// Make, when set, writes further files into dir and returns their
	// paths: for a state too large to keep as a file.
	Make func(dir string) ([]string, error)
	// Images is what --inspect-images would have read, for the checks that
	// need it.
	Images map[string]check.ImageFacts
	// State says why the fixture is that state, from the case's sources;
	// "reused" when it is the check's own gap fixture.
	State string
}

// caseFixtures names, per link (check ID, a tab, case ID), the fixture
// the check must flag with a finding citing the case. Every prevents and
// detects link needs one; related links need none (the check does not
// see that incident's trigger).
var caseFixtures = map[string]caseFixture{
	"addon-rbac-gap\teks-distro-coredns-endpointslice-rbac-2021":                                      {Files: []string{"rbac/testdata/addon-rbac-gap/before-upgrade.yaml"}, Complete: true, State: "CoreDNS 1.8.0 on EKS with the old system:coredns ClusterRole, before its add-on was moved to 1.8.4 (coredns/coredns#5495; kubergrunt#129 is the same step to 1.8.3); the EKS Distro install of the case's date had no such earlier state"},
	"addon-rbac-gap\tcluster-autoscaler-version-skew-api-2019":                                        {Files: []string{"rbac/testdata/addon-rbac-gap/gap.yaml"}, Complete: true, State: reusedIn},
	"aggregated-api-unavailable\tdatadog-oom-killer-namespace-deletion-2020":                          {Files: []string{"availability/testdata/aggregated-api-unavailable/gap.json"}, State: reusedIn},
	"api-heavy-node-agents\tcalico-node-full-resync-list-storm-eks-2021":                              {Files: []string{"agents/testdata/api-heavy-node-agents/gap.yaml"}, State: reusedPre},
	"api-heavy-node-agents\tlogging-daemonset-metadata-apiserver-flood-2020":                          {Files: []string{"agents/testdata/api-heavy-node-agents/gap.yaml"}, State: reusedPre},
	"api-heavy-node-agents\trancher-fleet-agent-secret-list-etcd-read-2023":                           {Files: []string{"agents/testdata/api-heavy-node-agents/gap.yaml"}, State: reusedPre},
	"api-heavy-node-agents\topenai-telemetry-apiserver-overload-2024":                                 {Files: []string{"agents/testdata/api-heavy-node-agents/gap.yaml"}, State: reusedIn},
	"attach-limit\tberkeley-datahub-max-volume-count-pending-2017":                                    {Files: []string{"storage/testdata/attach-limit/gap.yaml"}, State: reusedIn},
	"attach-limit\tebs-csi-attach-limit-overstated-nitro-eni-slots-2022-2023":                         {Files: []string{"storage/testdata/attach-limit/ebs-nitro-gap.yaml"}, Complete: true, State: "aws-ebs-csi-driver#1139's m5ad.4xlarge on the newest driver of 2022-02-02 (v1.5.x, before v1.6.0's fix) and pull request 1175's m6i.8xlarge at 39 before it, before more volume pods were scheduled than the nodes could attach"},
	"certificate-expiry\tadmission-webhook-cabundle-expired-2020":                                     {Make: expiringCAs, Complete: true, State: "the CA 60 days before its end date, where the case's CA was published (see expiringCAs)"},
	"certificate-expiry\tgitlab-gke-cluster-ca-five-year-expiry-2024":                                 {Make: expiringCAs, Complete: true, State: "the CA 60 days before its end date, where the case's CA was published (see expiringCAs)"},
	"certificate-expiry\tistio-citadel-root-ca-expiry-2019":                                           {Make: expiringCAs, Complete: true, State: "the CA 60 days before its end date, where the case's CA was published (see expiringCAs)"},
	"certificate-expiry\tlinkerd-trust-anchor-one-year-expiry-2020":                                   {Make: expiringCAs, Complete: true, State: "the CA 60 days before its end date, where the case's CA was published (see expiringCAs)"},
	"certificate-expiry\trancher-rke-one-year-cluster-certs-2019":                                     {Make: expiringCAs, Complete: true, State: "the CA 60 days before its end date, where the case's CA was published (see expiringCAs)"},
	"component-cve-versions\tingress-nginx-ingressnightmare-cve-2025-1974":                            {Files: []string{"versions/testdata/component-cve-versions/gap.yaml"}, State: reusedPre},
	"component-cve-versions\trunc-leaky-vessels-cve-2024-21626":                                       {Files: []string{"versions/testdata/component-cve-versions/gap.yaml"}, State: reusedPre},
	"control-plane-restarts\tnre-labs-etcd-liveness-probe-restarts-2018":                              {Files: []string{"probes/testdata/control-plane-restarts/before-probe-failures.yaml"}, Complete: true, State: "NRE Labs' single kubeadm etcd member with the etcdctl exec liveness probe kubeadm generated, before the probe began to fail (no restarts yet; versions stand in, the case gives none)"},
	"coredns-capacity\tzalando-coredns-oom-2019":                                                      {Files: []string{"dns/testdata/gap.json"}, State: reusedPre},
	"coredns-capacity\teks-vpc-resolver-throttling-coredns-colocated-2024":                            {Files: []string{"dns/testdata/gap.json"}, Complete: true, State: reusedPre},
	"coredns-capacity\trebelmouse-coredns-pod-loss-during-eks-node-reroll-2025":                       {Files: []string{"dns/testdata/gap.json"}, Complete: true, State: reusedPre},
	"cpu-limit-cfs-kernel\tkernel-cfs-quota-unnecessary-throttling-2018":                              {Files: []string{"resources/testdata/cfs-nodes.yaml"}, State: reusedPre},
	"cpu-limit-cfs-kernel\tomio-cpu-limits-cfs-throttling-2020":                                       {Files: []string{"resources/testdata/cfs-nodes.yaml"}, State: reusedPre},
	"credential-broker-duration\tadevinta-kiam-sdk-credential-latency-2019":                           {Files: []string{"agents/testdata/credential-broker-duration/gap.yaml"}, State: reusedPre},
	"critical-addon-colocation\torbos-coredns-replicas-same-node-reboot-2020":                         {Files: []string{"availability/testdata/gap.json"}, State: reusedPre},
	"critical-addon-colocation\teks-vpc-resolver-throttling-coredns-colocated-2024":                   {Files: []string{"availability/testdata/gap.json"}, State: reusedPre},
	"cronjob-pileup\tcronjob-snowball-webhook-gke-2020":                                               {Files: []string{"jobs/testdata/gap.yaml"}, State: reusedPre},
	"cronjob-pileup\tuniverse-job-retries-kill-every-node-2017":                                       {Files: []string{"jobs/testdata/gap.yaml"}, State: reusedIn},
	"crd-operator-version-skew\tprometheus-operator-crds-lag-operator-2021-2025":                      {Files: []string{"upgrade/testdata/crd-operator-version-skew/gap.yaml"}, Complete: true, State: "during helm-charts issue 5309: kube-prometheus-stack's operator moved to a new release by a helm upgrade while its monitoring.coreos.com CRDs keep the release they were first installed at (v0.81.0 and 0.75.2 stand in; the report gives neither)"},
	"crd-stored-version-drift\tcert-manager-1-7-removed-apis-stored-versions-2022":                    {Files: []string{"upgrade/testdata/crd-stored-version-drift/gap.yaml"}, Complete: true, State: "cert-manager v1.6.3's CRDs with v1alpha2 still in status.storedVersions, before the 1.7 upgrade"},
	"crd-stored-version-drift\tflux-2-7-removed-beta-apis-crd-upgrade-fails-2025":                     {Files: []string{"upgrade/testdata/crd-stored-version-drift/flux-gap.yaml"}, Complete: true, State: "Flux 2.6.0's HelmRelease (helm-controller v1.3.0) and Alert (notification-controller v1.6.0) CRDs with v2beta1 and v1beta1 still in status.storedVersions (as flux2 issue 5598's rejections show), before the chart 2.17.0 (Flux 2.7) upgrade"},
	"crd-stored-version-drift\tgateway-api-crd-v1alpha2-stored-version-upgrade-blocked-2023-2026":     {Files: []string{"upgrade/testdata/crd-stored-version-drift/gateway-api-gap.yaml"}, Complete: true, State: "Gateway API v0.8.0's GatewayClass CRD and v1.1.0's GRPCRoute CRD with v1alpha2 still in status.storedVersions (as the errors of gateway-api issue 2671 and traefik-helm-chart issue 1243 show), before the v1.0 and v1.2 CRDs are applied"},
	"crd-stored-version-drift\tcsi-snapshot-crd-version-removals-block-upgrades-2022-2025":            {Files: []string{"upgrade/testdata/crd-stored-version-drift/external-snapshotter-gap.yaml"}, Complete: true, State: "external-snapshotter v8.1.0's three group snapshot CRDs, v1alpha1 alone and stored (as piraeus helm-charts issue 54 and rke2-charts pull request 729 show), before the v8.2 CRDs, which define v1beta1 alone, are applied"},
	"crd-stored-version-drift\tkarpenter-v1-migration-conversion-webhook-and-stored-versions-2024":    {Files: []string{"upgrade/testdata/crd-stored-version-drift/karpenter-gap.yaml"}, Complete: true, State: "Karpenter v1.0.8's NodePool, NodeClaim and EC2NodeClass CRDs with v1beta1 still in status.storedVersions (as the refusals of karpenter-provider-aws issue 7734 and karpenter issues 2014 and 2157 show), before the 1.1 CRDs are applied"},
	"dataplane-node-compat\tkube-proxy-ipvs-conntrack-reuse-2019":                                     {Files: []string{"runtime/testdata/dataplane-node-compat/gap.yaml"}, State: reusedPre},
	"dataplane-node-compat\tkube-proxy-iptables-legacy-vs-nft-mismatch-2018":                          {Files: []string{"runtime/testdata/dataplane-node-compat/gap.yaml"}, State: reusedIn},
	"dataplane-node-compat\tvxlan-checksum-offload-63s-service-delay-2020":                            {Files: []string{"runtime/testdata/dataplane-node-compat/calico-before-117.yaml"}, Complete: true, State: "a Calico VXLAN overlay on Ubuntu 16.04 and CentOS 7 kernels with kube-proxy 1.16.9, before the move to 1.17 that kubernetes#91519 ties the delay to (versions and OS stand in; the table counts 1.16 before 1.16.13 as affected)"},
	"dataplane-node-compat\txing-conntrack-snat-race-connection-timeouts-2018":                        {Files: []string{"runtime/testdata/dataplane-node-compat/overlay-gap.yaml"}, State: reusedPre},
	"descheduler-evicts-cordoned\tmoj-cloud-platform-eks-130-upgrade-descheduler-cordoned-nodes-2025": {Files: []string{"availability/testdata/descheduler-evicts-cordoned/gap.yaml"}, State: reusedPre},
	"disruption-exposure\tmybinder-ingress-pods-on-cordoned-nodes-2019":                               {Files: []string{"availability/testdata/disruption-exposure/mybinder-before-cordon.yaml"}, Complete: true, State: "mybinder.org's pool migration before 12:50 on 3 April 2019: a newer pool up, both ingress-controller endpoints still on the old pool, not yet cordoned (versions and replica count stand in; the report gives neither)"},
	"disruption-exposure\tdevops-hof-drain-externaltrafficpolicy-local-ingress-outage-2019":           {Files: []string{"availability/testdata/gap.json"}, State: reusedPre},
	"disruption-exposure\texternaltrafficpolicy-local-rolling-update-502-2021":                        {Files: []string{"availability/testdata/gap.json"}, State: reusedPre},
	"disruption-exposure\tgke-surge-upgrade-two-replicas-no-pdb-2026":                                 {Files: []string{"availability/testdata/gap.json"}, Complete: true, State: reusedPre},
	"disruption-exposure\tdfds-ami-rollover-cordons-all-nodes-single-replica-2024":                    {Files: []string{"availability/testdata/gap.json"}, Complete: true, State: reusedPre},
	"docker-socket-coupling\taks-119-containerd-switch-breaks-docker-sock-mounts-2021":                {Files: []string{"runtime/testdata/docker-socket-coupling/aks-118-before.yaml"}, Complete: true, State: "AKS 1.18 nodes still on Docker with an Argo workflow pod mounting /var/run/docker.sock as type Socket (argo-workflows#5243's volume), before the 1.19 upgrade moves the pool to containerd"},
	"etcd-known-bad-version\tetcd-3-5-to-3-6-upgrade-learner-and-zombie-member-issues-2025":           {Files: []string{"versions/testdata/etcd-known-bad-version/before-3-6-upgrade.yaml"}, Complete: true, State: "three kubeadm etcd members on 3.5.24 (a stand-in in the 3.5.25-or-earlier range SIG-etcd's December 2025 post names for the zombie members), before the move to 3.6"},
	"etcd-known-bad-version\tetcd-35-data-inconsistency-not-for-production-2022":                      {Files: []string{"versions/testdata/etcd-known-bad-version/gap.yaml"}, State: reusedPre},
	"external-dns-routing\tmoj-cloud-platform-external-dns-blocked-by-unrelated-ingress-2022":         {Files: []string{"ingress/testdata/external-dns-routing/gap.yaml"}, State: reusedPre},
	"ingress-nginx-legacy-tls\tmoj-cloud-platform-ingress-nginx-upgrade-drops-legacy-tls-2020":        {Files: []string{"ingress/testdata/ingress-nginx-legacy-tls/moj-before-upgrade.yaml"}, Complete: true, State: "MoJ's nginx-ingress-acme controller before the 2020-04-15 upgrade: chart 1.24.0's default image 0.26.1, --configmap naming ingress-controllers/nginx-ingress-acme-controller as the chart's templates name it for that release (our reading), whose values set no ssl-ciphers (the case's Terraform and chart sources); the ConfigMap is not in the file because kubegap does not read it"},
	"ingress-nginx-snippet-gates\tingress-nginx-snippets-disabled-and-risk-level-2023-2025":           {Files: []string{"ingress/testdata/ingress-nginx-snippet-gates/gap.yaml"}, Complete: true, State: "ingress-nginx 1.11 with allow-snippet-annotations \"true\" and annotations-risk-level unset, serving tooling/keycloak with the configuration-snippet of issue 12621, before the chart 4.12 (controller 1.12.0) upgrade"},
	"ingress-nginx-path-validation\tingress-nginx-path-validation-breaks-upgrades-2023-2025":          {Files: []string{"ingress/testdata/ingress-nginx-path-validation/gap.yaml"}, Complete: true, State: "ingress-nginx 1.11.4 (chart 4.11.4, which issue 12637's reporter says worked) with strict-validate-path-type unset, serving the Prefix paths 1.12.0 refused there and the Exact path of GluuFederation/flex issue 2220, before the 1.12.0 upgrade"},
	"gitops-deletion-guard\targocd-2-8-6-etcd-growth-read-only-mass-app-deletion-2023":                {Files: []string{"gitops/testdata/gitops-deletion-guard/argocd-286-gap.yaml"}, Complete: true, State: "Argo CD v2.8.6 before etcd turned read-only in argo-cd issue 16284: the ApplicationSet controller on its default policy and an ApplicationSet without preserveResourcesOnDeletion whose generated Applications carry the resources finalizer (one ApplicationSet and two Applications stand in for the issue's 151 and 1,375)"},
	"gitops-deletion-guard\targocd-applicationset-transient-error-deletes-apps-2024":                  {Files: []string{"gitops/testdata/gitops-deletion-guard/gap.yaml"}, Complete: true, State: "Argo CD v2.11.3 before the deletion of argo-cd issue 18780: the ApplicationSet controller on its default policy (no key in argocd-cmd-params-cm) and generated Applications carrying the resources finalizer, named after the issue's log"},
	"gitops-global-prune\tskyscanner-template-global-delete-2021":                                     {Files: []string{"gitops/testdata/gitops-global-prune/gap.yaml"}, State: reusedPre},
	"hpa-metric-source\thpa-scales-down-when-custom-metric-broken-2021":                               {Files: []string{"autoscaling/testdata/gap.yaml"}, State: reusedPre},
	"image-pull-always\tdaemonset-pull-always-nat-ratelimit":                                          {Files: []string{"registries/testdata/image-pull-always/gap.yaml"}, State: reusedPre},
	"image-pull-always\tgithub-sidecar-oom-pull-always-registry":                                      {Files: []string{"registries/testdata/image-pull-always/gap.yaml"}, State: reusedPre},
	"image-pull-always\tdocker-hub-pull-rate-limits":                                                  {Files: []string{"registries/testdata/image-pull-always/gap.yaml"}, State: reusedPre},
	"ingress-backend-termination\travelin-gke-ingress-502-pod-termination-2019":                       {Files: []string{"ingress/testdata/ingress-backend-termination/gap.yaml"}, State: reusedPre},
	"ingress-class-binding\tingress-nginx-v1-ignores-classless-ingresses-2021":                        {Files: []string{"ingress/testdata/gap.yaml"}, State: reusedPre},
	"ingress-controller-resilience\tzalando-skipper-ingress-oom-2019":                                 {Files: []string{"ingress/testdata/ingress-controller-resilience/gap.yaml"}, State: reusedPre},
	"kernel-cni-known-bad\tcentos7-kmem-accounting-cgroup-leak-2018":                                  {Files: []string{"runtime/testdata/kernel-cni-known-bad/centos7-before-kubelet-19.yaml"}, Complete: true, State: "a CentOS 7 node on the 3.10 kernel with kubelet 1.6, before kubernetes#61937's upgrade to 1.9 turned kernel-memory accounting on"},
	"hpa-replicas-applied\tgitops-selfheal-fights-hpa-keda-replicas-2020-2026":                        {Files: []string{"autoscaling/testdata/hpa-replicas-applied/gap.yaml"}, Complete: true, State: "before uberswe/createmod.com pull request 1097: a Deployment whose manifest sets replicas 2 under an HPA of minimum 4 (maximum 16 from pull request 1560), applied client-side as Argo CD does by default (names, image and requests ours)"},
	"keda-pod-identity-removal\tkeda-2-15-pod-identity-removal-aks-addon-2023-2024":                   {Files: []string{"autoscaling/testdata/keda-pod-identity-removal/gap.yaml"}, Complete: true, State: "KEDA 2.14.3 from its Helm chart with a TriggerAuthentication on spec.podIdentity.provider azure (Azure AD Pod Identity, as keda issue 6075 configured it), before KEDA 2.15, or the AKS add-on's move to 2.15 at Kubernetes 1.31, arrives"},
	"kafka-zookeeper-removal\tstrimzi-0-46-removes-zookeeper-clusters-unmanageable-2025":              {Files: []string{"versions/testdata/kafka-zookeeper-removal/gap.yaml"}, Complete: true, State: "strimzi#11630 before the operator upgrade: Strimzi 0.45.0 running a Kafka whose status.kafkaMetadataState is ZooKeeper, with the ZooKeeperRemoval warning ibm-mas/ansible-devops#1732 shows"},
	"kernel-cni-known-bad\tflatcar-3033-2-2-kernel-breaks-cilium-ipsec-2022":                          {Files: []string{"runtime/testdata/kernel-cni-known-bad/gap.yaml"}, State: reusedIn},
	"kernel-cni-known-bad\tflatcar-systemd-245-rp-filter-breaks-cilium-2020":                          {Files: []string{"runtime/testdata/kernel-cni-known-bad/gap.yaml"}, State: reusedIn},
	"kernel-cni-known-bad\tnew-kernel-vs-cilium-bpf-incompatibility-2026":                             {Files: []string{"runtime/testdata/kernel-cni-known-bad/gap.yaml"}, State: reusedIn},
	"kernel-cni-known-bad\tcni-minor-release-regressions-calico-3-27-cilium-1-15-4-2024":              {Files: []string{"runtime/testdata/kernel-cni-known-bad/gap.yaml"}, State: reusedIn},
	"kernel-cni-known-bad\taks-containerd-1-4-4-containercreating-2021":                               {Files: []string{"runtime/testdata/kernel-cni-known-bad/gap.yaml"}, State: reusedPre},
	"kernel-cni-known-bad\tcontainerd-1-6-9-sandbox-ip-lost-restart-recreates-pods-2022":              {Files: []string{"runtime/testdata/kernel-cni-known-bad/gap.yaml"}, State: "node k0s-worker-0 on containerd 1.6.12, the release of the containerd issue's reproduction, before its next runtime restart"},
	"kernel-cni-known-bad\taks-kernel-6-2-azure-cni-transparent-endpoint-2023":                        {Files: []string{"runtime/testdata/kernel-cni-known-bad/aks-kernel-6-2.yaml"}, State: "node aks-nodepool1-0 after its restart onto kernel 6.2.0-1015-azure, the build named in Azure/AKS#3939, beside a sibling still on an older kernel"},
	"kernel-cni-known-bad\tdfds-recalled-eks-ami-daily-rollover-2022":                                 {Files: []string{"runtime/testdata/kernel-cni-known-bad/gap.yaml"}, State: reusedIn},
	"node-disk-drift\tindiehosters-control-plane-disk-full-etcd-2025":                                 {Files: []string{"resources/testdata/node-disk-drift/control-plane-pressure.yaml"}, Complete: true, State: "three control-plane nodes, one reporting DiskPressure as its root filesystem fills (IndieHosters' postmortem: \"/\" full on one of three control-plane VMs); that the VMs register as Nodes is assumed, the postmortem does not say"},
	"node-disk-drift\tmoj-cloud-platform-eks-module-upgrade-shrinks-node-disk-2023":                   {Files: []string{"resources/testdata/node-disk-drift/before-drain.yaml"}, Complete: true, State: "after the EKS module 18 upgrade created the new node group with 20 GB root disks and before the drain moved workloads onto it: both groups Ready, no DiskPressure, no failed pulls (the report compares old and new nodes' disks; it names no instance type)"},
	"node-critical-daemon-oom\tmultus-thick-daemon-oom-cascade-2023-2026":                             {Files: []string{"resources/testdata/node-critical-daemon-oom/gap.yaml"}, Complete: true, State: "the Multus thick DaemonSet as the project's sample deploys it (daemon limited to 50Mi, init container without limits), before a node reboot starts many pods at once"},
	"node-disk-drift\topenebs-hostpath-volume-fills-root-disk-evictions-2026":                         {Files: []string{"resources/testdata/node-disk-drift/local-volumes-gap.yaml"}, Complete: true, State: "SREGym#537 before the volume grew: storage-loki-0's 10Gi volume on the openebs-hostpath class with no quota, under /var/openebs/local on node2"},
	"node-os-lifecycle\tdatadog-systemd-networkd-cilium-2023":                                         {Files: []string{"versions/testdata/node-os-lifecycle/monoculture-nodes.yaml"}, Complete: true, State: reusedPre},
	"node-os-lifecycle\tubuntu-hwe-5-13-kernel-container-panic":                                       {Files: []string{"versions/testdata/node-os-lifecycle/stale-image.yaml"}, State: reusedPre},
	"node-os-lifecycle\taks-node-os-retirements-ubuntu1804-azurelinux2-2025":                          {Files: []string{"versions/testdata/node-os-lifecycle/aks-1804.yaml"}, State: reusedPre},
	"node-os-lifecycle\teks-amazon-linux-2-ami-end-of-support-2025":                                   {Files: []string{"versions/testdata/node-os-lifecycle/provider-windows.yaml"}, State: reusedPre},
	"node-os-lifecycle\tpgmac-simultaneous-three-node-reboot-2026":                                    {Files: []string{"versions/testdata/node-os-lifecycle/monoculture-nodes.yaml"}, Complete: true, State: reusedPre},
	"node-reservation-insufficient\tgardener-kubelet-reserved-100mi-node-notready-2019":               {Files: []string{"resources/testdata/reservation-gap.yaml"}, State: reusedPre},
	"node-reservation-insufficient\tnu-nl-elastalert-no-limits-2019":                                  {Files: []string{"resources/testdata/reservation-gap.yaml"}, State: reusedPre},
	"node-reservation-insufficient\tdfds-rogue-dev-pod-and-agent-memory-node-notready-2024":           {Files: []string{"resources/testdata/reservation-gap.yaml"}, State: reusedPre},
	"nodelocal-dns-hazards\tnodelocaldns-notrack-breaks-calico-policy-2021":                           {Files: []string{"dns/testdata/gap.json"}, State: reusedIn},
	"nodelocal-dns-hazards\tnodelocaldns-iptables-rule-growth-and-teardown-2023":                      {Files: []string{"dns/testdata/gap.json"}, State: reusedPre},
	"object-count-explosion\tfullstaq-dex-cr-storage-control-plane-outage-2019":                       {Files: []string{"objects/testdata/object-count-explosion/gap/authrequests.dex.coreos.com.count.json"}, State: reusedPre},
	"object-count-explosion\tjenkins-x-dex-authrequests-not-gced-2020":                                {Files: []string{"objects/testdata/object-count-explosion/gap/authrequests.dex.coreos.com.count.json"}, State: reusedPre},
	"object-count-explosion\treplicaset-history-accumulation-2017":                                    {Files: []string{"objects/testdata/object-count-explosion/gap/deployments.apps.json"}, State: reusedPre},
	"object-count-explosion\tsap-helm-release-configmaps-etcd-bloat-2017":                             {Files: []string{"objects/testdata/object-count-explosion/gap/deployments.apps.json"}, State: reusedPre},
	"object-count-explosion\tzwindler-kyverno-events-fill-etcd-2023":                                  {Files: []string{"objects/testdata/object-count-explosion/gap/events.events.k8s.io.count.json"}, State: reusedPre},
	"object-count-explosion\tsso-dex-authrequests-flux-apiserver-2020":                                {Files: []string{"objects/testdata/object-count-explosion/dex-before"}, State: "Dex with Kubernetes storage holding a dozen AuthRequests (the CRD served), before the dictionary attack pushed them to about 4 million"},
	"pdb-blocks-drain\tazure-workload-identity-pdb-blocks-aks-upgrade":                                {Files: []string{"availability/testdata/pdb-blocks-drain/gap.yaml"}, State: reusedPre},
	"pdb-blocks-drain\tkubeflow-pdbs-block-aks-upgrade":                                               {Files: []string{"availability/testdata/pdb-blocks-drain/gap.yaml"}, State: reusedPre},
	"pdb-blocks-drain\tazure-cni-v2-glibc":                                                            {Files: []string{"availability/testdata/pdb-blocks-drain/pending.yaml"}, State: reusedIn},
	"registry-pull-failures\tproject-registries-ghcr-cr-l5d-io-outages-2022-2023":                     {Files: []string{"registries/testdata/registry-pull-failures/linkerd-install.yaml"}, State: "the fresh Linkerd install of linkerd/linkerd2#9899 while cr.l5d.io answered 503: the identity pod, its node, the proxy-init image and the Failed event as the issue shows them; the other two control-plane pods, the second node, the ReplicaSet hashes and the controller image's tag are stand-ins"},
	"registry-pull-failures\tchina-docker-hub-mirrors-withdrawn-2022-2024":                            {Files: []string{"registries/testdata/registry-pull-failures/docker-hub-timeout.yaml"}, State: "docker.io out of reach without a mirror, with the timeout to registry-1.docker.io that kubeasz#1451 and #1454 report; those reports pulled on hosts, so the two workloads are stand-ins"},
	"pod-sandbox-failures\tazure-cni-v2-glibc":                                                        {Files: []string{"runtime/testdata/pod-sandbox-failures/gap.yaml"}, State: reusedIn},
	"pod-sandbox-failures\tcontainerd-chained-cni-regression":                                         {Files: []string{"runtime/testdata/pod-sandbox-failures/link-not-found.yaml"}, State: reusedIn},
	"pod-sandbox-failures\tubuntu-systemd-dns-2022":                                                   {Files: []string{"runtime/testdata/pod-sandbox-failures/other-signatures.yaml"}, State: reusedIn},
	"pod-sandbox-failures\tmoj-cloud-platform-vpc-cni-prefix-delegation-missing-2023":                 {Files: []string{"runtime/testdata/pod-sandbox-failures/vpc-cni-no-ip.yaml"}, State: "new pods in ContainerCreating on an EKS node whose VPC CNI could not give them an address; the report names no error, so the event is the VPC CNI's usual one (kubernetes/kubernetes#131071)"},
	"pods-stuck-terminating\tberkeley-datahub-docker-hung-nodes-pods-stuck-terminating-2017":          {Files: []string{"availability/testdata/pods-stuck-terminating/gap.json"}, State: reusedIn},
	"pool-scales-to-zero\tberkeley-datahub-core-pool-autoscaled-to-zero-2024":                         {Files: []string{"availability/testdata/pool-scales-to-zero/gap.yaml"}, State: reusedPre},
	"probe-cascade\tmozilla-mdn-liveness-probe-mysql-cascade-2017":                                    {Files: []string{"probes/testdata/gap.yaml"}, State: reusedPre},
	"probe-cascade\tk8s-120-exec-probe-timeout-enforced-2021":                                         {Files: []string{"probes/testdata/gap.yaml"}, State: reusedPre},
	"pv-zone-schedulability\tebs-volume-zone-no-schedulable-node-2019-2021":                           {Files: []string{"storage/testdata/zone-gap.yaml"}, State: reusedPre},
	"pv-zone-schedulability\tcluster-autoscaler-node-local-csistoragecapacity-blocks-scaleup-2026":    {Files: []string{"storage/testdata/zone-gap.yaml"}, State: reusedPre},
	"registry-risk\tk8s-gcr-io-redirect-and-freeze-2023":                                              {Files: []string{"registries/testdata/gap.yaml"}, State: reusedPre},
	"registry-risk\tbitnami-public-catalog-moved-to-legacy-2025":                                      {Files: []string{"registries/testdata/gap.yaml"}, State: reusedPre},
	"registry-risk\tchainguard-free-tier-latest-only-2023":                                            {Files: []string{"registries/testdata/chainguard/before-2023-08-16.yaml"}, Complete: true, State: "workloads on cgr.dev/chainguard version tags before 16 August 2023: nginx:1.23.3 from the SELKS Deployment manifest Chainguard's notice named (Clear-NDR-ISO#447), postgres:15 and redis:7 from images#1228, beside postgres:latest, which kept pulling"},
	"registry-risk\tgoogle-container-registry-shutdown-2025":                                          {Files: []string{"registries/testdata/gap.yaml"}, State: reusedPre},
	"registry-risk\tquay-io-outages-2020-2023":                                                        {Files: []string{"registries/testdata/fleet.yaml"}, State: reusedPre},
	"removed-apis\thelm-release-history-psp-blocks-upgrade-125-2023":                                  {Files: []string{"upgrade/testdata/old-manifests.yaml"}, State: reusedPre},
	"removed-apis\tpsp-mutation-reliance-before-removal-2023":                                         {Files: []string{"upgrade/testdata/old-manifests.yaml"}, State: reusedPre},
	"replica-spread\tmoonlight-cpu-colocation-kernel-panic-2019":                                      {Files: []string{"availability/testdata/replica-spread/gap.json"}, State: reusedPre},
	"runtime-default-change-exposure\trunc-1-2-drops-tun-tap-default-allow-2024":                      {Files: []string{"runtime/testdata/runtime-default-change-exposure/gap.yaml"}, Complete: true, State: "workers on containerd 1.7.23 with Tailscale, gluetun and OpenVPN workloads on NET_ADMIN without privileged, before the update to 1.7.24"},
	"runtime-default-change-exposure\teks-ami-v20231220-containerd-nofile-1024-2023":                  {Files: []string{"runtime/testdata/runtime-default-change-exposure/gap.yaml"}, Complete: true, State: "an Amazon Linux 2 node from AMI v20231201 running Istio and Envoy pods, before nodes were built from v20231220"},
	"runtime-default-change-exposure\tk8s-1-28-cgroupv2-oom-group-kills-whole-container-2024":         {Files: []string{"runtime/testdata/runtime-default-change-exposure/oom-group-gap.yaml"}, Complete: true, State: "an AKS 1.27.9 node on Ubuntu 22.04 whose kernel monitor reports a single-process OOM kill (Azure/AKS issue 4154), before its upgrade to 1.28"},
	"runtime-kubelet-compat\tkubelet-126-cri-v1alpha2-removed-old-containerd-2023":                    {Files: []string{"runtime/testdata/runtime-kubelet-compat/gap.yaml"}, State: reusedPre},
	"pending-no-room\tdfds-system-reserved-fix-leaves-workloads-pending-2025":                         {Files: []string{"scheduling/testdata/pending-no-room/dfds-after-reserved.yaml"}, Complete: true, State: "after the systemReserved raise of 3 March 2025: a customer workload's pod Pending for lack of room on every node, no autoscaler (DFDS added nodes through its pipeline); node sizes and the scheduler message are stand-ins, the postmortem gives neither"},
	"selector-matches-no-node\tdell-csm-master-nodeselector-k8s124-2022":                              {Files: []string{"scheduling/testdata/unschedulable.yaml"}, State: reusedIn},
	"stale-token-clients\teks-121-bound-sa-token-90-day-stale-2022":                                   {Files: []string{"versions/testdata/stale-token-clients/gap.yaml"}, State: reusedPre},
	"system-daemonset-priority\tdfds-all-nodes-deleted-no-priority-classes-2019":                      {Files: []string{"availability/testdata/system-daemonset-priority/gap.json"}, State: reusedPre},
	"unrequested-memory\tappfarm-gke-auto-upgrade-restart-storm-2023":                                 {Files: []string{"resources/testdata/unrequested-memory/gap.yaml"}, State: reusedPre},
	"registry-risk\tregistry-k8s-io-regional-backend-outages-and-blocks-2022-2024": {Files: []string{"registries/testdata/node-start/hetzner-kubeadm-before.yaml"}, Complete: true,
		State: "a kubeadm cluster on Hetzner whose CSI node sidecars and static control-plane pods pull from registry.k8s.io, before the 403s of hetznercloud/csi-driver#592 and the upgrade 503s of kubernetes/k8s.io#5181 (tags stand in)"},
	"object-count-explosion\tcilium-security-identity-exhaustion-2024-2025":                                   {Files: []string{"objects/testdata/object-count-explosion/cilium-identities-gap/ciliumidentities.cilium.io.count.json"}, State: "54,000 CiliumIdentities, 83 percent of the range: in our reading what the 2023 cluster (up to 10,000 uniquely labelled pods a day, about 65,000 identities when allocation failed) held about a day before it failed"},
	"runtime-default-change-exposure\tcontainerd-2-registry-mirrors-break-node-patching-daemonsets-2024-2026": {Files: []string{"runtime/testdata/runtime-default-change-exposure/containerd-config-gap.yaml"}, Complete: true, State: "GKE 1.32 nodes on containerd 1.7 running the public GKE sample's private-registry DaemonSet (privileged, the host's /etc mounted writable, a config.toml-appending script in a ConfigMap), before the nodes move to 1.33 and containerd 2.0; that its CA setting (registry.configs.tls) stops working there is our reading of GKE's note that 2.0 removed it"},
	"calico-ipam-blocks\tcalico-ipam-blocks-leaked-pool-exhausted-2019-2021":                                  {Files: []string{"runtime/testdata/calico-ipam-blocks/gap.yaml"}, Complete: true, State: "an autoscaled cluster in Kubernetes datastore mode, as the kops and EKS reports were, whose /20 pool in /26 blocks has 57 of 64 blocks held for removed nodes, before the scale-up that finds no free block (issue 2713's pattern scaled down; that cluster likely kept IPAM in etcd, where the check sees nothing)"},
	"upgrade-preflight\tazure-cni-v2-glibc": {Files: []string{"testdata/caselinks/azure-cni-v2-glibc-pre-upgrade.yaml", "testdata/azure-founding/azure-cns-static.yaml"}, Complete: true, Server: "v1.34.9", Target: "1.35",
		State: "the founding AKS cluster before the upgrade (the case's source, Azure/azure-container-networking#4793): all nodes on 1.34, the np2004 pool on Ubuntu 20.04, azure-cns with the statically linked v1.7.16-0 installer; judged at --target-version 1.35, whose installer is the dynamically linked v2 build"},
	"upgrade-preflight\tk3s-1-26-removes-flannel-wireguard-ipsec-backends-2022": {Files: []string{"upgrade/testdata/k3s/flannel-gap.yaml"}, Complete: true, Server: "v1.25.4+k3s1", Target: "1.26",
		State: "k3s QA's v1.25.4+k3s1 server on --flannel-backend=wireguard (k3s-io/k3s#6440), before the upgrade to 1.26; the extension backend type is PR 5011's"},
	"upgrade-preflight\tk3s-1-32-bundled-traefik-v3-breaks-routes-2025": {Files: []string{"upgrade/testdata/k3s/traefik-gap.yaml"}, Complete: true, Server: "v1.31.5+k3s1", Target: "1.32.5",
		State: "k3s-io/k3s#12586's v1.31.5+k3s1 cluster with its packaged Traefik v2, before the upgrade to v1.32.5+k3s1"},
	"upgrade-preflight\tdfds-eks-114-coredns-vendor-upgrade-crashloop-2020": {Files: []string{"testdata/caselinks/dfds-eks-113-before-114.yaml"}, Complete: true, Server: "v1.13.12-eks-eb1860", Target: "1.14",
		State: "EKS 1.13 with a self-managed CoreDNS older than the 1.6.6 the EKS user guide listed for 1.14, before the planned upgrade to 1.14 (the postmortem does not give the CoreDNS version; see the fixture)"},
	"upgrade-preflight\tcoredns-endpointslice-v1beta1-after-upgrade-2023": {Files: []string{"upgrade/testdata/coredns-endpointslice-120.yaml"}, Complete: true, Server: "v1.20.15", Target: "1.26",
		State: "coredns issue 6176's cluster before its upgrade: Kubernetes 1.20 with CoreDNS 1.9.3 installed on it, about to go to 1.26"},
	"upgrade-preflight\tk3s-135-kubelet-refuses-cgroup-v1-2026":               {Files: []string{"upgrade/testdata/aks-134-fips.yaml"}, Target: "1.35", State: reusedPre},
	"upgrade-preflight\tazure-workload-identity-pdb-blocks-aks-upgrade":       {Files: []string{"upgrade/testdata/aks-134-fips.yaml"}, Complete: true, Target: "1.35", State: reusedPre},
	"upgrade-preflight\tkubeflow-pdbs-block-aks-upgrade":                      {Files: []string{"upgrade/testdata/aks-134-fips.yaml"}, Complete: true, Target: "1.35", State: reusedPre},
	"upgrade-preflight\tingress-nginx-v0-on-k8s-122-ingress-v1beta1-2021":     {Files: []string{"upgrade/testdata/ingress-nginx.yaml"}, Target: "1.22", State: reusedPre + "; judged at the incident's target, 1.22"},
	"upgrade-preflight\tkubelet-126-cri-v1alpha2-removed-old-containerd-2023": {Files: []string{"upgrade/testdata/node-requirements.yaml"}, Target: "1.26", State: reusedPre + "; judged at the incident's target, 1.26"},
	"upgrade-preflight\teks-amazon-linux-2-ami-end-of-support-2025":           {Files: []string{"upgrade/testdata/eks-al2.yaml"}, Target: "1.33", State: reusedPre},
	"upgrade-preflight\taks-node-os-retirements-ubuntu1804-azurelinux2-2025":  {Files: []string{"upgrade/testdata/aks-windows.yaml"}, Target: "1.33", State: reusedPre},
	"version-skew\tazure-cni-v2-glibc":                                        {Files: []string{"versions/testdata/version-skew/kube-proxy.yaml"}, State: reusedIn},
	"webhook-blast-radius\tpod-create-webhooks-unreachable-network-deadlock-2026": {Files: []string{"availability/testdata/webhook-blast-radius/kai-scheduler-pre.yaml", "availability/testdata/webhook-blast-radius/kai-scheduler-policy-cut.yaml"}, Complete: true,
		State: "KAI-Scheduler's fail-closed pod webhooks (as its operator writes them at the commit the report links) behind a NetworkPolicy admitting only pods, which stands for the unpublished policy that cut them off"},
	"webhook-blast-radius\topenkruise-pod-webhook-hang-blocks-all-pods-2021-2025":     {Files: []string{"availability/testdata/webhook-blast-radius/kruise-1.5.0-pre.yaml"}, Complete: true, State: "OpenKruise as Helm chart 1.5.0 installs it by default (openkruise/charts versions/kruise/1.5 at 573aaa4): mpod.kb.io failurePolicy Fail on pod CREATE, selector control-plane DoesNotExist, which covers kube-system, two ready manager replicas; the configuration as installed, before the API server's calls to the webhook failed (kruise 1958 ran 1.5.0)"},
	"webhook-blast-radius\tjetstack-gke-opa-webhook-upgrade":                          {Files: []string{"availability/testdata/webhook-blast-radius/gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tdaemonset-pull-always-nat-ratelimit":                       {Files: []string{"availability/testdata/webhook-blast-radius/gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tdfds-alcide-admission-webhook-timeouts-2020":               {Files: []string{"availability/testdata/webhook-blast-radius/gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tkyverno-oom-webhook-blocks-all-resources-aks-2022":         {Files: []string{"availability/testdata/webhook-blast-radius/gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tgatekeeper-webhook-blocks-user-cluster-control-plane-2020": {Files: []string{"availability/testdata/webhook-blast-radius/gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tkyverno-blocks-apiserver-133-servicecidr-upgrade-2026":     {Files: []string{"availability/testdata/webhook-blast-radius/gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tkyverno-metrics-server-capi-upgrade-deadlock-2021":         {Files: []string{"availability/testdata/webhook-blast-radius/gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tkyverno-aks-stop-start-bootstrap-deadlock-2026":            {Files: []string{"availability/testdata/webhook-blast-radius/gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tdfds-kyverno-webhook-blocks-service-crud-2022":             {Files: []string{"availability/testdata/webhook-blast-radius/services-gap.yaml"}, State: reusedPre},
	"webhook-blast-radius\tlinkerd-injector-fail-open-unmeshed-pods-and-fail-closed-kube-system-2019-2025": {Files: []string{"availability/testdata/webhook-blast-radius/linkerd-ha-pre.yaml"},
		State: "Linkerd's injector as the stable-2.11.0 chart renders it in HA mode (Fail, 3 replicas, a namespaceSelector that covers an unlabelled kube-system), the state linkerd2#10817's kube-system errors imply before its node patching"},
	"host-binary-glibc\tazure-cni-v2-glibc": {Files: []string{"testdata/azure-founding/cluster.yaml", "testdata/azure-founding/azure-cns-v2.yaml"}, Complete: true,
		State: "the founding AKS cluster mid-upgrade (the case's sources): Ubuntu 20.04 nodes while azure-cns already runs the dynamically linked v2 installer"},
	"containerd-chained-cni\tcontainerd-chained-cni-regression":                   {Files: []string{"runtime/testdata/containerd-chained-cni/nodes.yaml", "runtime/testdata/containerd-chained-cni/multus-thick.yaml", "runtime/testdata/containerd-chained-cni/nads.yaml"}, Complete: true, State: reusedIn + ": nodes already on the affected containerd"},
	"component-cve-versions\tcve-2018-1002105-apiserver-upgrade-proxy-escalation": {Files: []string{"versions/testdata/component-cve-versions/gap.yaml"}, Complete: true, Server: "v1.11.3", State: reusedPre + "; an API server at 1.11.3, an affected release"},
	"etcd-capacity-signals\tembedded-etcd-2gib-quota-nospace-k3s-2021-2026": {Files: []string{"objects/testdata/etcd-capacity-signals/gap/nodes.yaml", "objects/testdata/etcd-capacity-signals/gap/metrics.txt"}, Complete: true,
		State: "k3s-io/k3s#5331's three v1.23.4+k3s1 embedded-etcd servers on the default 2 GiB quota, with the database at 75 % of it before it filled"},
	"dataplane-node-compat\tel8-el9-iptables-backend-mismatch-calico-kube-proxy-2023-2025": {Files: []string{"runtime/testdata/dataplane-node-compat/calico-auto-gap.yaml"}, Complete: true,
		State: "projectcalico/calico#7393's workers on RHEL 8 under the calico-node 3.24.1 DaemonSet (the image #7741 pulled) with FELIX_IPTABLESBACKEND=Auto, as the reporter ran it while iptables -V in calico-node printed 1.8.4 (legacy); an Amazon Linux 2 node beside them"},
	"api-write-latency\ttrocco-eks-upgrade-control-plane-latency-job-startup-2025": {Files: []string{"objects/testdata/api-write-latency/gap/nodes.yaml", "objects/testdata/api-write-latency/gap/metrics.txt"}, Complete: true,
		State: "in the incident: TROCCO's upgraded EKS control plane, where the team traced minutes-long Job start-up to API latency; the proposal names no API call or number, so the /metrics values (POST jobs and pods with 15 % and 10 % of writes over 1s) are our construction of what slow control-plane writes look like"},
	"custom-resource-size\targocd-application-status-exceeds-etcd-request-limit-2023-2025": {Files: []string{"objects/testdata/custom-resource-size/gap.yaml"}, Complete: true,
		State: "deployKF/deployKF#224's profiles-generator Application as stored before the patch that failed, at the size its reporter measured (about 475 KB of status.history, 367 KB of status.resources and 64 KB of spec) with revisionHistoryLimit unset"},
	"object-count-explosion\tunbounded-terminated-pods-apiserver-oom-2015": {Make: evictedPods(5200),
		State: "5,200 Failed (Evicted) pods of one ReplicaSet kept, as spot evictions left them, before the API server ran out of memory listing them; the check's threshold is a few thousand"},
	"certificate-expiry\topenshift-cluster-shutdown-expired-kubelet-certs-pending-csrs-2020-2024": {Make: okdPendingNodeCSRs, Complete: true,
		State: "okd-project/okd 285's cluster after power-on: both nodes NotReady, the first four kubelet client requests the issue lists, from the node-bootstrapper service account, pending 23, 14, 8 and 14 minutes before the check's clock (see okdPendingNodeCSRs)"},
	"certificate-expiry\tdapr-sentry-one-year-root-cert-expiry-2021-2024": {Make: daprSentryInstalled(300), Complete: true,
		State: "Dapr 1.7.2 (the release of dapr/dapr 4560) with its dapr-sentry Deployment created 300 days before the check's clock: the root Sentry generated at install, valid a year, is in Secret dapr-system/dapr-trust-bundle only (see daprSentryInstalled)"},
	"certificate-expiry\ttanzu-vks-guest-cluster-certs-expire-on-node-anniversary-2026": {Make: capiControlPlaneNode(300), Complete: true,
		State: "a Cluster API workload cluster (a Tanzu/VKS guest cluster is one) left unupgraded: its control-plane Node, carrying Cluster API's cluster.x-k8s.io/machine and owner-kind KubeadmControlPlane annotations, created 300 days before the check's clock, so the one-year kubeadm certificates issued at its first boot have 65 days left (see capiControlPlaneNode)"},
	"certificate-expiry\tcert-manager-acme-rate-limit-renewal-loops-2020-2026": {Make: rateLimitedRenewal, Complete: true,
		State: "a Let's Encrypt Certificate in istio-system (the namespace and ClusterIssuer of cert-manager#3603) whose renewal time passed 20 days ago and whose Ready condition carries the 429 rateLimited message of that issue's CertificateRequest, 10 days before its end date (see rateLimitedRenewal)"},
	"default-certificate-hosts\tmoj-cloud-platform-terraform-wrong-cluster-default-certificate-2021": {Files: []string{"ingress/testdata/default-certificate-hosts/gap.yaml"}, Complete: true,
		State: reusedIn + ": the wrong apply has landed and the default certificate names the manager cluster"},
	"registry-risk\tdocker-hub-pull-rate-limits": {Files: []string{"testdata/caselinks/docker-hub-fleet.yaml"}, Complete: true,
		State: "registries/testdata/fleet.yaml with docker.io for quay.io: a fleet pulling anonymously from Docker Hub, a DaemonSet with Always and an HPA-scaled :latest Deployment, as before Docker Hub enforced per-IP pull limits"},
	"selector-matches-no-node\thetzner-k3s-upgrade-plan-legacy-master-selector-2026":         {Files: []string{"scheduling/testdata/upgrade-plans/nodes.yaml", "scheduling/testdata/upgrade-plans/gap.yaml"}, Complete: true, State: "the upgrade under way: the k3s-server and k3s-agent Plans hetzner-k3s created, with the master-label selectors hetzner-k3s#706 quotes, on a K3s v1.34.1 cluster whose control-plane node carries only node-role.kubernetes.io/control-plane"},
	"kubelet-api-rate-limit\tzalando-kubelet-api-qps-2019":                                   {Files: []string{"versions/testdata/kubelet-api-rate-limit/gap.yaml"}, Complete: true, State: reusedPre + ": builder nodes on a kubelet below 1.27 at its default kubeAPIQPS, beside kube2iam"},
	"jvm-cgroup-compat\taks-125-cgroupv2-old-jre-memory-2023":                                {Files: []string{"runtime/testdata/jvm-cgroup-compat/aks-124.yaml"}, Complete: true, Images: jvmFixtureImages, State: "an AKS 1.24.9 node pool on the Ubuntu 18.04 node image (cgroup v1) before the upgrade to 1.25, running an image whose JRE is 11.0.14, the release a reporter on Azure/AKS#3443 found could not read cgroup v2 limits after the move to Ubuntu 22.04"},
	"jvm-cgroup-compat\tkernel-612-breaks-jvm-container-detection-2026":                      {Files: []string{"runtime/testdata/jvm-cgroup-compat/gap.yaml"}, Complete: true, Images: jvmFixtureImages, State: reusedIn + ": nodes on kernel 6.12 or later already run the old JDK"},
	"image-manifest-compat\tcontainerd-2-schema1-images-fail-to-pull-2024":                   {Files: []string{"runtime/testdata/image-manifest-compat/gap.yaml"}, Complete: true, Images: manifestFixtureImages, State: reusedPre},
	"removed-node-labels\tdell-csm-master-nodeselector-k8s124-2022":                          {Files: []string{"scheduling/testdata/removed-node-labels/nodes.yaml", "scheduling/testdata/removed-node-labels/gap.yaml"}, State: reusedIn + ": nodes already on the release that dropped the label"},
	"removed-node-labels\treddit-pi-day-calico-master-label-2023":                            {Files: []string{"scheduling/testdata/removed-node-labels/bgp-nodes-1.23.yaml", "scheduling/testdata/removed-node-labels/bgp-peers.yaml"}, Complete: true, State: "the kubeadm cluster on 1.23 before the upgrade to 1.24, its control-plane node still labelled node-role.kubernetes.io/master, with route reflector BGPPeers whose nodeSelector and peerSelector name that label (so the post puts it, as retellings quote it; the exact expressions are not published, and Calico's Kubernetes datastore, where BGPPeers are API objects, is assumed)"},
	"eks-coredns-version\tdfds-eks-114-coredns-vendor-upgrade-crashloop-2020":                {Files: []string{"dns/testdata/eks-coredns-version/gap.yaml"}, Complete: true, Server: "v1.20.15-eks-ba74326", State: reusedIn},
	"addon-version-compat\tingress-nginx-v0-on-k8s-122-ingress-v1beta1-2021":                 {Files: []string{"upgrade/testdata/ingress-nginx.yaml"}, Complete: true, Server: "v1.21.14", Target: "1.22", State: reusedPre + "; judged at the incident's target, 1.22"},
	"in-tree-volume-migration\teks-123-ebs-csi-migration-pvc-pending-2023":                   {Files: []string{"storage/testdata/migration-gap.yaml"}, Complete: true, Server: "v1.22.17-eks-0a21954", State: reusedPre + "; an EKS 1.22 cluster, one minor before the migration"},
	"cilium-dns-proxy-restart\tcilium-dns-proxy-outage-on-agent-or-envoy-restart-2022-2025":  {Files: []string{"runtime/testdata/cilium-dns-proxy-restart/gap.yaml"}, Complete: true, State: "the cilium-agent DaemonSet and the cluster-wide DNS policy (rules.dns matchPattern \"*\") of cilium/cilium issue 21059, before an agent restart"},
	"cluster-dns-known-bad-release\tcoredns-known-bad-releases-2019-2023":                    {Files: []string{"dns/testdata/cluster-dns-known-bad-release/gap.yaml"}, Complete: true, State: "the CoreDNS Deployment kubeadm 1.14 deployed, CoreDNS 1.3.1 with nothing mounted at /tmp, before the API server restart of kubernetes issue 75414"},
	"cluster-dns-known-bad-release\tkube-dns-dnsmasq-regressions-gke-dns-timeouts-2021-2023": {Files: []string{"dns/testdata/cluster-dns-known-bad-release/kube-dns-gap.yaml"}, Complete: true, State: "a GKE kube-dns Deployment on a build of kube-dns 1.22.13 (dnsmasq 2.87), as the reporters' cluster upgrades left it when the timeouts of kubernetes/dns issue 562 began"},
	"deprecated-api-usage\tmanaged-upgrades-blocked-by-deprecated-api-usage-2021-2025": {Files: []string{"upgrade/testdata/deprecated-usage/aks-125/metrics.txt", "upgrade/testdata/deprecated-usage/aks-125/nodes.yaml"}, Target: "1.26",
		State: "an AKS 1.25 cluster before the refused upgrade to 1.26: a client still requesting flowcontrol.apiserver.k8s.io/v1beta1 prioritylevelconfigurations (removed_release 1.26), the API of the example UpgradeBlockedOnDeprecatedAPIUsage error in the case's AKS source; judged at the target AKS refused, 1.26"},
	"deprecated-api-usage\taggregated-apiservers-watch-removed-flowcontrol-versions-2024-2025": {Files: []string{"upgrade/testdata/deprecated-usage/webhook-130/metrics.txt"}, Target: "1.32",
		State: "a Kubernetes 1.30 API server before the upgrade to 1.32: a DNS-01 webhook still listing and watching flowcontrol.apiserver.k8s.io/v1beta3 flowschemas and prioritylevelconfigurations (removed_release 1.32), as the Hetzner webhook's deprecation warnings on 1.30 showed (vadimkim/cert-manager-webhook-hetzner#75); judged at 1.32, where v1beta3 is no longer served"},
	"addon-end-of-life\tingress-nginx-retired-march-2026": {Files: []string{"versions/testdata/addon-end-of-life/gap.yaml"}, Complete: true,
		State: "ingress-nginx v1.15.1 as the project's static manifest deploys it, one of its last releases, kept running after the retirement of 24 March 2026 (the check's clock is the wall clock, past that day)"},
	"in-tree-cloud-provider\taws-in-tree-cloud-provider-removed-kubernetes-1-27-2023-2024": {Files: []string{"upgrade/testdata/in-tree-cloud-provider/gap.yaml"}, Complete: true, Target: "1.27",
		State: "a self-managed 1.26 control plane still on the in-tree AWS provider (kube-controller-manager and kube-apiserver static pods started with --cloud-provider=aws, as kubeadm and RKE2 configure it), judged at the upgrade to 1.27 that removed the provider (kubernetes/kubernetes pull request 115838)"},
	"eks-addon-drift\teks-managed-addon-reverts-coredns-customisation-2021-2025": {Files: []string{"dns/testdata/eks-addon-drift/gap.yaml"}, Complete: true,
		State: "EKS's CoreDNS add-on (field manager eks) after a kubectl edit of the Corefile forwarding a Consul domain (aws/containers-roadmap issue 1159) and a kubectl change of the replicas (issue 2350), before the add-on manager next applies the add-on"},
	"vpc-cni-policy-startup-race\tvpc-cni-network-policy-agent-startup-race-drops-2023-2024": {Files: []string{"runtime/testdata/vpc-cni-policy-startup-race/gap.yaml"}, Complete: true,
		State: "network policy support enabled on the VPC CNI (aws-node's node agent v1.0.8-eksbuild.1, the release a user still saw drops with in aws-network-policy-agent issue 73, started with --enable-network-policy=true) and a NetworkPolicy allowing egress to the database subnet, as in issue 236, before a pod restarts and connects at startup"},
	"addon-end-of-life\trancher-rke1-end-of-life-july-2025": {Files: []string{"versions/testdata/addon-end-of-life/rke1-gap.yaml"}, Complete: true,
		State: "an RKE-built cluster kept running past 31 July 2025: three Docker nodes carrying the rke.cattle.io/internal-ip (and external-ip) annotations that rancher/rke's node code writes on every node it provisions (the check's clock is the wall clock, past that day)"},
	"karpenter-disruption-exposure\tkarpenter-consolidation-no-pdb-api-gateway-outage-2025": {Files: []string{"availability/testdata/karpenter-disruption-exposure/gap.yaml"}, Complete: true,
		State: "the write-up's NodePool (WhenEmptyOrUnderutilized, consolidateAfter 30s, budgets nodes \"100%\") on Karpenter 1.5.3 with the API gateway's pods all on its nodes and no PodDisruptionBudget, before consolidation began"},
	"karpenter-disruption-exposure\tkarpenter-ami-drift-defect-unexpected-replacement-2024": {Files: []string{"availability/testdata/karpenter-disruption-exposure/ami-drift-gap.yaml"}, Complete: true,
		State: "the Karpenter controller on 0.36.1, below the 0.36.2 patch release the AWS notice asks for, before any drift replacement"},
	"openshift-cgroup-v1\topenshift-okd-cgroup-v1-clusters-upgrade-failures-and-gate-2023-2025": {Files: []string{"upgrade/testdata/openshift-cgroup-v1/gap.yaml"}, Complete: true,
		State: "a cluster on cgroup v1 before an update: nodes.config.openshift.io cluster with spec.cgroupMode v1, the field the Machine Config Operator records for clusters that set v1 explicitly (its pull request 3793) and the one its ClusterOnCgroupV1 gate reads (pull request 4822); whether the OKD cluster of November 2023 had its v1 there or only in kernel arguments is not in the report (the case's unverified)"},
	"karpenter-disruption-exposure\tebs-csi-karpenter-multi-attach-six-minute-stall-2020-2025": {Files: []string{"availability/testdata/karpenter-disruption-exposure/detach-stall-gap.yaml"}, Complete: true,
		State: "the reproduction of aws-ebs-csi-driver issue 1955 before its node replacements: Karpenter 0.35.2, EKS's default gp2 StorageClass (kubernetes.io/aws-ebs) and a one-replica StatefulSet with a ReadWriteOnce claim template on a NodePool testarm64 node"},
	"disruption-exposure\t2i2c-leap-autoscaler-drains-core-node-single-hub-pod-2023": {Files: []string{"availability/testdata/disruption-exposure/leap-hub.yaml"}, Complete: true,
		State: "LEAP's hub before the autoscaler's scale-down of 1 November 2023: the one-replica hub Deployment and its Service as Zero to JupyterHub 3.2.0 renders them, with the chart's hub PodDisruptionBudget off (its default), on two core-pool nodes"},
	"object-count-explosion\tkyverno-admission-reports-fill-etcd-2023-2026": {Files: []string{"objects/testdata/object-count-explosion/kyverno-reports/gap"},
		State: "a Kyverno 1.10 cluster holding 400,000 AdmissionReports, a quarter of the 1.6 million kyverno/kyverno#8974's EKS cluster held when its etcd turned read-only: the reports piling up, months before the quota was reached"},
	"hpa-metric-source\tkeda-external-metrics-apiservice-owned-by-another-adapter-2023": {Files: []string{"autoscaling/testdata/external-metrics-owner/gap.yaml"}, Complete: true,
		State: "KEDA's metrics server installed while v1beta1.external.metrics.k8s.io still names infra-prod/datadog-cluster-agent-metrics-api, the Datadog Cluster Agent's Service (kedacore/keda#4415), before the first ScaledObject and its HPA"},
	"vpa-eviction-loop\tvpa-updater-eviction-loops-and-mass-evictions-2019-2026":           {Files: []string{"autoscaling/testdata/vpa-eviction-loop/gap.yaml"}, Complete: true, State: "issue 8776's setup before the loop: an InPlaceOrRecreate VPA on a one-replica, two-container Deployment in a namespace with a LimitRange of type Pod (second container name and limit values ours)"},
	"envoyfilter-upgrade-hazards\tistio-envoyfilters-break-across-upgrades-2020-2024":      {Files: []string{"upgrade/testdata/envoyfilter-upgrade-hazards/gap.yaml"}, Complete: true, State: "a mesh before its upgrade past Istio 1.8: the header EnvoyFilter of the 1.9 upgrade notes (envoy.http_connection_manager, envoy.router) and issue 24266's Lua filter in the pre-1.6 spec.filters form (namespaces ours)"},
	"gatekeeper-audit-oom\tgatekeeper-audit-oomkilled-violations-never-reported-2020-2026": {Files: []string{"resources/testdata/gatekeeper-audit-oom/gap.yaml"}, Complete: true, State: "Gatekeeper's audit Deployment with the chart's 512Mi memory limit and --audit-chunk-size=0, before the cluster outgrows it (image tag and other args ours)"},
}

// jvmFixtureImages and manifestFixtureImages are what --inspect-images
// reads from the runtime area's fixtures' images, as its tests give them.
var (
	jvmFixtureImages = map[string]check.ImageFacts{
		"registry.example.com/shop/orders:3.2":  {LayersRead: true, MediaType: "application/vnd.oci.image.manifest.v1+json", Java: []check.JavaRuntime{{Home: "/opt/java/openjdk", Version: "11.0.14", Date: "2022-01-18", VM: "Hotspot"}}},
		"registry.example.com/shop/billing:1.0": {LayersRead: true, MediaType: "application/vnd.oci.image.manifest.v1+json", Java: []check.JavaRuntime{{Home: "/opt/java/openjdk", Version: "21.0.9", Date: "2025-10-21", VM: "Hotspot"}}},
	}
	manifestFixtureImages = map[string]check.ImageFacts{
		"registry.example.com/library/busybox:latest": {MediaType: "application/vnd.docker.distribution.manifest.v1+prettyjws"},
		"registry.example.com/library/busybox:1.36":   {MediaType: "application/vnd.oci.image.manifest.v1+json", LayersRead: true},
	}
)

// evictedPods writes n Failed, Evicted pods of one ReplicaSet (and a few
// running ones) as a kubectl List.
func evictedPods(n int) func(dir string) ([]string, error) {
	return func(dir string) ([]string, error) {
		var items []string
		for i := range n {
			items = append(items, fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"evicted-%d","namespace":"batch","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"spot-worker","uid":"rs1","controller":true}]},"spec":{"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Failed","reason":"Evicted"}}`, i))
		}
		for i := range 20 {
			items = append(items, fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"running-%d","namespace":"batch"},"spec":{"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Running"}}`, i))
		}
		p := filepath.Join(dir, "pods.json")
		return []string{p}, os.WriteFile(p, []byte(`{"apiVersion":"v1","kind":"List","items":[`+strings.Join(items, ",\n")+"]}\n"), 0o644)
	}
}

// expiringCAs writes the cluster state weeks before the certificate
// incidents: a one-year CA, made now and ending in 60 days, published where
// each case's CA lived — the kube-root-ca.crt ConfigMap (the cluster CA of
// the RKE and GKE cases), Istio's istio-ca-root-cert, Linkerd's trust
// roots, and the caBundle of a failurePolicy Fail webhook on pods. The
// check's clock is the wall clock, so the state is made at test time.
func expiringCAs(dir string) ([]string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "expiring-ca"},
		NotBefore: now.AddDate(0, 0, -305), NotAfter: now.AddDate(0, 0, 60),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	indented := "    " + strings.ReplaceAll(strings.TrimSpace(pemText), "\n", "\n    ")
	cm := func(ns, name, key string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata:\n  %s: |\n%s\n", name, ns, key, indented)
	}
	doc := strings.Join([]string{
		cm("kube-system", "kube-root-ca.crt", "ca.crt"),
		cm("istio-system", "istio-ca-root-cert", "root-cert.pem"),
		cm("linkerd", "linkerd-identity-trust-roots", "ca-bundle.crt"),
		fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: auto-tracing-validator}
webhooks:
- name: validate.auto-tracing.example.com
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    service: {namespace: tracing, name: webhook}
    caBundle: %s
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
`, base64.StdEncoding.EncodeToString([]byte(pemText))),
	}, "---\n")
	p := filepath.Join(dir, "expiring-cas.yaml")
	return []string{p}, os.WriteFile(p, []byte(doc), 0o644)
}

// okdPendingNodeCSRs writes okd-project/okd 285's cluster as it was
// after power-on: its two NotReady nodes and the kubelet client requests
// the issue lists, made by the node-bootstrapper service account with no
// condition, at the ages shown there (23m, 14m, 7m49s, 14m) before now: the
// first four rows of its oc get csr output (the fifth, csr-w4kbp at 23m, is
// cut off before its signer in the copy read, so it is left out).
func okdPendingNodeCSRs(dir string) ([]string, error) {
	now := time.Now().UTC()
	docs := []string{}
	for _, n := range []string{"master0.ocp4.example.com", "worker0.ocp4.example.com"} {
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Node
metadata: {name: %s}
status:
  conditions:
  - {type: Ready, status: Unknown, reason: NodeStatusUnknown}
  nodeInfo: {kubeletVersion: v1.20.0+5fbfd19-1046}
`, n))
	}
	for _, c := range []struct {
		name string
		age  time.Duration
	}{{"csr-fd8gx", 23 * time.Minute}, {"csr-fqq6s", 14 * time.Minute}, {"csr-k55sq", 7*time.Minute + 49*time.Second}, {"csr-tqbch", 14 * time.Minute}} {
		docs = append(docs, fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: %s, creationTimestamp: %q}
spec:
  signerName: kubernetes.io/kube-apiserver-client-kubelet
  username: system:serviceaccount:openshift-machine-config-operator:node-bootstrapper
`, c.name, now.Add(-c.age).Format(time.RFC3339)))
	}
	p := filepath.Join(dir, "okd-pending-node-csrs.yaml")
	return []string{p}, os.WriteFile(p, []byte(strings.Join(docs, "---\n")), 0o644)
}

// daprSentryInstalled writes Dapr 1.7.2's Sentry Deployment in
// dapr-system, created days before now: the cluster of dapr/dapr 4560
// before its first year was up, when the root Sentry generated at install
// was still valid and lived only in the trust-bundle Secret (which
// kubegap never reads, and the fixture does not hold).
func daprSentryInstalled(days int) func(dir string) ([]string, error) {
	return func(dir string) ([]string, error) {
		created := time.Now().AddDate(0, 0, -days).UTC().Format(time.RFC3339)
		doc := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: dapr-sentry, namespace: dapr-system, creationTimestamp: %q, labels: {app: dapr-sentry}}
spec:
  selector: {matchLabels: {app: dapr-sentry}}
  template:
    metadata: {labels: {app: dapr-sentry}}
    spec:
      containers:
      - {name: dapr-sentry, image: docker.io/daprio/dapr:1.7.2, command: [/sentry]}
`, created)
		p := filepath.Join(dir, "dapr-sentry.yaml")
		return []string{p}, os.WriteFile(p, []byte(doc), 0o644)
	}
}

// capiControlPlaneNode writes the control-plane Node of a Cluster API
// workload cluster created days before now, with the annotations Cluster
// API puts on the Nodes of its Machines: a guest cluster nobody upgraded or
// rolled since, before the one-year kubeadm certificates of that node end.
func capiControlPlaneNode(days int) func(dir string) ([]string, error) {
	return func(dir string) ([]string, error) {
		created := time.Now().AddDate(0, 0, -days).UTC().Format(time.RFC3339)
		doc := fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: tkc-prod-control-plane-7xk2p
  creationTimestamp: %q
  labels: {node-role.kubernetes.io/control-plane: ""}
  annotations: {cluster.x-k8s.io/machine: tkc-prod-control-plane-7xk2p, cluster.x-k8s.io/owner-kind: KubeadmControlPlane}
`, created)
		p := filepath.Join(dir, "capi-node.yaml")
		return []string{p}, os.WriteFile(p, []byte(doc), 0o644)
	}
}

// rateLimitedRenewal writes a cert-manager Certificate whose renewal is
// refused by Let's Encrypt's rate limit, as in cert-manager#3603: the
// name, namespace and ClusterIssuer are that issue's, and the Ready
// message is its CertificateRequest's (the issue shows no Certificate
// status); the secret name is a placeholder and the dates are relative to
// the check's clock (renewal due 20 days ago, 10 days left).
func rateLimitedRenewal(dir string) ([]string, error) {
	now := time.Now().UTC()
	doc := fmt.Sprintf(`apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: 78502295-xyz-cert, namespace: istio-system}
spec:
  secretName: 78502295-xyz-cert
  issuerRef: {kind: ClusterIssuer, name: letsencrypt-production}
status:
  notAfter: %q
  renewalTime: %q
  conditions:
  - type: Ready
    status: "False"
    reason: Failed
    message: 'Failed to wait for order resource "78502295-xyz-cert-sf28k-3636131827" to become ready: order is in "errored" state: Failed to create Order: 429 urn:ietf:params:acme:error:rateLimited: Error creating new order :: too many new orders recently: see https://letsencrypt.org/docs/rate-limits/'
`, now.AddDate(0, 0, 10).Format(time.RFC3339), now.AddDate(0, 0, -20).Format(time.RFC3339))
	p := filepath.Join(dir, "rate-limited-certificate.yaml")
	return []string{p}, os.WriteFile(p, []byte(doc), 0o644)
}

// What a reused fixture is: the check's own gap fixture, whose objects
// hold the configuration gap the check's rule reads as it stood before
// the incident's trigger (reusedPre), or the cluster with the incident
// under way (reusedIn). Neither is rebuilt object by object from the
// case's sources; the link's grade comes from reading the case's trigger
// and root cause against the check's rules.
const (
	reusedPre = "reused: the check's gap fixture, holding the gap its rule reads before the trigger"
	reusedIn  = "reused: the check's gap fixture, holding the incident's state or symptoms"
)

// linksAwaitingFixture are prevents or detects links whose fixture is not
// built yet, each with why: a short list that may only shrink.
var linksAwaitingFixture = map[string]string{}

// maxAwaitingFixture caps linksAwaitingFixture; raising it is accepting
// a citation the tests do not back, which a reviewer must see.
const maxAwaitingFixture = 0

func linkKey(checkID, caseID string) string { return checkID + "\t" + caseID }

// TestEveryCaseLinkHasItsFixture: every check–case link has a relation;
// every prevents or detects link has a fixture the check flags with a
// finding citing the case (and carrying the relation), or is on the short
// awaiting list with a reason.
func TestEveryCaseLinkHasItsFixture(t *testing.T) {
	if len(linksAwaitingFixture) > maxAwaitingFixture {
		t.Errorf("%d links await a fixture, more than %d", len(linksAwaitingFixture), maxAwaitingFixture)
	}
	linked := map[string]check.Relation{}
	count := map[check.Relation]int{}
	withFixture := map[check.Relation]int{}
	for _, c := range All() {
		seen := map[string]bool{}
		for _, l := range c.Cases {
			key := linkKey(c.ID, l.ID)
			if seen[l.ID] {
				continue // a data table may name a case twice
			}
			seen[l.ID] = true
			linked[key] = l.Relation
			count[l.Relation]++
			if !l.Relation.Valid() {
				t.Errorf("%s cites %s with no relation: grade it prevents, detects or related", c.ID, l.ID)
				continue
			}
			fx, has := caseFixtures[key]
			reason, waiting := linksAwaitingFixture[key]
			switch {
			case l.Relation == check.RelRelated:
				if has || waiting {
					t.Errorf("%s cites %s as related: drop its fixture entry, or regrade the link", c.ID, l.ID)
				}
				continue
			case has && waiting:
				t.Errorf("%s → %s has a fixture: remove it from linksAwaitingFixture", c.ID, l.ID)
			case waiting:
				if strings.TrimSpace(reason) == "" {
					t.Errorf("%s → %s awaits a fixture without a reason", c.ID, l.ID)
				}
				continue
			case !has:
				t.Errorf("%s cites %s as %s but no fixture shows it: add one to caseFixtures (%s state), or regrade the link",
					c.ID, l.ID, l.Relation, map[check.Relation]string{check.RelPrevents: "pre-incident", check.RelDetects: "in-incident"}[l.Relation])
				continue
			}
			withFixture[l.Relation]++
			t.Run(c.ID+"/"+l.ID, func(t *testing.T) { assertFlags(t, c, l, fx) })
		}
	}
	for key := range caseFixtures {
		if _, ok := linked[key]; !ok {
			t.Errorf("caseFixtures names %q, which is not a link of the registry", key)
		}
	}
	for key := range linksAwaitingFixture {
		if _, ok := linked[key]; !ok {
			t.Errorf("linksAwaitingFixture names %q, which is not a link of the registry", key)
		}
	}
	t.Logf("%d links: %d prevents (%d with a fixture), %d detects (%d with a fixture), %d related; %d awaiting a fixture",
		len(linked), count[check.RelPrevents], withFixture[check.RelPrevents], count[check.RelDetects], withFixture[check.RelDetects],
		count[check.RelRelated], len(linksAwaitingFixture))
}

func assertFlags(t *testing.T, c check.Check, l check.CaseLink, fx caseFixture) {
	if fx.State == "" {
		t.Errorf("fixture of %s → %s does not say what state it is", c.ID, l.ID)
	}
	files := fx.Files
	if fx.Make != nil {
		more, err := fx.Make(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		files = append(append([]string(nil), files...), more...)
	}
	s, err := snapshot.LoadPaths(files)
	if err != nil {
		t.Fatalf("loading %v: %v", fx.Files, err)
	}
	if fx.Complete {
		checktest.Complete(s)
	}
	if fx.Server != "" {
		s.Source.ServerVersion = fx.Server
	}
	ctx := &check.Context{Snapshot: s, Images: fx.Images}
	if fx.Target != "" {
		v, ok := check.ParseKubeVersion(fx.Target)
		if !ok {
			t.Fatalf("bad target %q", fx.Target)
		}
		ctx.Target = &v
	}
	fs, err := c.Run(ctx)
	if err != nil {
		t.Fatalf("%s on %v: %v", c.ID, fx.Files, err)
	}
	var citing []string
	for i := range fs {
		c.LinkCases(&fs[i])
		if fs[i].RelationTo(l.ID) == l.Relation {
			return
		}
		citing = append(citing, fmt.Sprintf("%s %v", fs[i].Title, fs[i].Cases))
	}
	sort.Strings(citing)
	t.Errorf("%s on %s made no finding citing %s as %s; findings: %v", c.ID, strings.Join(fx.Files, ", "), l.ID, l.Relation, citing)
}
