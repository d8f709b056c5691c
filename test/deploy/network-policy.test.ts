import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../support/cli.js';

/**
 * deploy/kubernetes/network-policy.yaml against the manifests it protects (issue 47, item 7),
 * and every Secret volume's mode (item 5). Each check is a function that lists what is wrong:
 * the manifests as they are give an empty list, and the last block breaks a copy of them once
 * per kind of mistake to see that each check names it.
 */
const DIR = join(ROOT, 'deploy/kubernetes');
/** The placeholders of network-policy.yaml: change them there and here together. */
const GATEWAY_NAMESPACE = 'example-gateway';
const MONITORING_NAMESPACE = 'example-monitoring';
/** The SAR service's namespace, whose pods alone may reach the SAR door (decisions §23). */
const SAR_NAMESPACE = 'example-sar';
const NAMESPACE_NAME = 'kubernetes.io/metadata.name';

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
interface Peer {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface PolicyPort {
  port?: number | string;
  protocol?: string;
  endPort?: number;
}
interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: PolicyPort[];
}
interface Container {
  name: string;
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  env?: { name: string; value?: string }[];
  readinessProbe?: { httpGet?: { port: number | string } };
  securityContext?: { runAsUser?: number; runAsGroup?: number };
  volumeMounts?: { name: string }[];
}
interface Volume {
  name: string;
  secret?: { secretName?: string; defaultMode?: number; items?: { key: string; mode?: number }[] };
  projected?: {
    defaultMode?: number;
    sources: { secret?: { name?: string; items?: { key: string; mode?: number }[] } }[];
  };
}
interface PodSpec {
  securityContext?: { runAsUser?: number; runAsGroup?: number; fsGroup?: number };
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
}
interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: PodSpec;
}
interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
}
interface K8sObject {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: {
    template?: PodTemplate;
    jobTemplate?: { spec: { template: PodTemplate } };
    // NetworkPolicy
    podSelector?: Selector;
    policyTypes?: string[];
    ingress?: Rule[];
    egress?: Rule[];
    // Service
    selector?: Record<string, string>;
    ports?: ServicePort[];
  };
}
interface Manifest {
  readonly file: string;
  readonly object: K8sObject;
}

/**
 * Kubernetes reads manifests as YAML 1.1 (sigs.k8s.io/yaml, on go-yaml v2): `defaultMode: 0440`
 * is octal, 288. The yaml package's default, YAML 1.2, would read the decimal 440 (0670).
 */
const YAML_AS_KUBERNETES = { version: '1.1' } as const;

function load(): Manifest[] {
  const files = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(DIR, file), 'utf8'), YAML_AS_KUBERNETES).map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
      return { file, object: doc.toJS() as K8sObject };
    }),
  );
}

/** A pod every workload in the manifests runs: its template's labels and spec. */
interface Pod {
  readonly name: string;
  readonly kind: string;
  readonly labels: Record<string, string>;
  readonly spec: PodSpec;
}
function pods(manifests: readonly Manifest[]): Pod[] {
  return manifests.flatMap(({ object }) => {
    const template = object.spec?.template ?? object.spec?.jobTemplate?.spec.template;
    if (template === undefined) return [];
    return [
      {
        name: `${object.kind}/${object.metadata.name}`,
        kind: object.kind,
        labels: template.metadata?.labels ?? {},
        spec: template.spec,
      },
    ];
  });
}

/** A label selector as the API server reads it; `{}` selects everything. */
function selects(selector: Selector | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    const ok =
      operator === 'In'
        ? has && values.includes(labels[key] ?? '')
        : operator === 'NotIn'
          ? !has || !values.includes(labels[key] ?? '')
          : operator === 'Exists'
            ? has
            : operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

const policies = (m: readonly Manifest[]) => m.map((x) => x.object).filter((o) => o.kind === 'NetworkPolicy');
const policiesOf = (m: readonly Manifest[], pod: Pod) =>
  policies(m).filter((p) => selects(p.spec?.podSelector, pod.labels));
const isAllowList = (p: K8sObject) => (p.spec?.ingress?.length ?? 0) + (p.spec?.egress?.length ?? 0) > 0;

function server(m: readonly Manifest[]): { pod: Pod; service: K8sObject } {
  const deployments = pods(m).filter((p) => p.kind === 'Deployment');
  if (deployments.length !== 1) throw new Error(`expected one Deployment, found ${deployments.length}`);
  const pod = deployments[0] as Pod;
  const service = m.find(
    (x) =>
      x.object.kind === 'Service' &&
      selects({ matchLabels: x.object.spec?.selector ?? { '': 'no selector' } }, pod.labels),
  )?.object;
  if (service === undefined) throw new Error('no Service selects the Deployment’s pods');
  return { pod, service };
}

const containersOf = (spec: PodSpec) => [...(spec.initContainers ?? []), ...spec.containers];

/** A port given by name or number, as the container port number it means in this pod. */
function resolve(pod: Pod, port: number | string | undefined): number | undefined {
  const ports = containersOf(pod.spec).flatMap((c) => c.ports ?? []);
  if (typeof port === 'number') return ports.some((p) => p.containerPort === port) ? port : undefined;
  return ports.find((p) => p.name !== undefined && p.name === port)?.containerPort;
}

/** The namespace a selector names when it is exactly "the namespace named N". */
function namespaceName(ns: Selector | undefined): string | undefined {
  if (ns === undefined || (ns.matchExpressions?.length ?? 0) > 0) return undefined;
  const labels = Object.keys(ns.matchLabels ?? {});
  return labels.length === 1 && labels[0] === NAMESPACE_NAME ? ns.matchLabels?.[NAMESPACE_NAME] : undefined;
}
/** The namespace a peer allows when it is pods of the namespace named N, not an address block. */
const namespaceOnly = (peer: Peer) =>
  peer.ipBlock === undefined ? namespaceName(peer.namespaceSelector) : undefined;

// ---------------------------------------------------------------------------------- the checks

/** Every pod is shut by a deny on both directions and opened by exactly one allow-list. */
function checkCoverage(m: readonly Manifest[]): string[] {
  const problems: string[] = [];
  for (const p of policies(m)) {
    const types = [...(p.spec?.policyTypes ?? [])].sort();
    if (types.join() !== 'Egress,Ingress') problems.push(`${p.metadata.name}: policyTypes ${types} not both`);
    if (p.spec?.podSelector === undefined) problems.push(`${p.metadata.name}: no podSelector`);
    if (!pods(m).some((pod) => selects(p.spec?.podSelector, pod.labels)))
      problems.push(`${p.metadata.name}: selects no pod of the manifests`);
  }
  for (const pod of pods(m)) {
    const mine = policiesOf(m, pod);
    if (!mine.some((p) => !isAllowList(p) && p.spec?.policyTypes?.length === 2))
      problems.push(`${pod.name}: no default deny selects its pods`);
    const allow = mine.filter(isAllowList).map((p) => p.metadata.name);
    if (allow.length !== 1) problems.push(`${pod.name}: selected by ${allow.length} allow-lists (${allow})`);
  }
  return problems;
}

/** The service's ingress ports are its container ports; the API's are the Service's targetPorts. */
function checkIngressPorts(m: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const { pod, service } = server(m);
  const containerPorts = containersOf(pod.spec).flatMap((c) => c.ports ?? []);
  const byNumber = new Set(containerPorts.map((p) => p.containerPort));
  const opened = new Set<number>();
  for (const policy of policiesOf(m, pod))
    for (const rule of policy.spec?.ingress ?? [])
      for (const port of rule.ports ?? []) {
        const number = resolve(pod, port.port);
        if (number === undefined)
          problems.push(`${policy.metadata.name}: port ${port.port} is no container port`);
        else opened.add(number);
        if ((port.protocol ?? 'TCP') !== 'TCP')
          problems.push(`${policy.metadata.name}: protocol ${port.protocol}`);
        if (port.endPort !== undefined) problems.push(`${policy.metadata.name}: a port range`);
      }
  if ([...opened].sort().join() !== [...byNumber].sort().join())
    problems.push(`ingress opens ports ${[...opened]}, the Deployment's are ${[...byNumber]}`);
  for (const port of service.spec?.ports ?? []) {
    if (resolve(pod, port.targetPort ?? port.port) === undefined)
      problems.push(`Service port ${port.name}: targetPort ${port.targetPort} is no container port`);
  }
  // What the image listens on (the Dockerfile's PORT and MANAGEMENT_PORT unless the Deployment
  // sets them): the container ports must be those.
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const env = new Map(containersOf(pod.spec).flatMap((c) => (c.env ?? []).map((e) => [e.name, e.value])));
  // The SAR door's too, when the Deployment opens it (the image has no SAR_PORT of its own).
  const names = ['PORT', 'MANAGEMENT_PORT', ...(env.has('SAR_PORT') ? ['SAR_PORT'] : [])];
  const listens = names.map((name) =>
    Number(env.get(name) ?? new RegExp(`\\b${name}=(\\d+)`).exec(dockerfile)?.[1]),
  );
  if (listens.sort().join() !== [...byNumber].sort().join())
    problems.push(`the container ports ${[...byNumber]} are not the ports the image listens on, ${listens}`);
  return problems;
}

/** The SAR door's container port: the one the Deployment's `SAR_PORT` names, if it sets one. */
function sarPort(pod: Pod): number | undefined {
  const env = new Map(containersOf(pod.spec).flatMap((c) => (c.env ?? []).map((e) => [e.name, e.value])));
  const port = env.get('SAR_PORT');
  return port === undefined ? undefined : resolve(pod, Number(port));
}

/**
 * The API port from the gateway's namespace only, the management port from monitoring's only,
 * the SAR door from the SAR service's pods only (a pod selector in its namespace), never
 * behind the API's Service.
 */
function checkIngressSources(m: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const { pod, service } = server(m);
  const api = new Set((service.spec?.ports ?? []).map((p) => resolve(pod, p.targetPort ?? p.port)));
  const sar = sarPort(pod);
  if (sar !== undefined && api.has(sar)) problems.push(`the SAR port ${sar} is behind the API's Service`);
  const probe = pod.spec.containers.map((c) => c.readinessProbe?.httpGet?.port).find((p) => p !== undefined);
  const management = resolve(pod, probe);
  if (management === undefined || api.has(management))
    problems.push(`the readiness probe's port ${probe} is not a management port of its own`);
  const from = new Map<number | undefined, Set<string>>();
  for (const policy of policiesOf(m, pod))
    for (const rule of policy.spec?.ingress ?? []) {
      const name = policy.metadata.name;
      if ((rule.ports?.length ?? 0) === 0) problems.push(`${name}: an ingress rule to every port`);
      if ((rule.from?.length ?? 0) === 0) problems.push(`${name}: an ingress rule from anywhere`);
      for (const peer of rule.from ?? []) {
        const ns = namespaceOnly(peer);
        if (ns === undefined)
          problems.push(`${name}: a source other than one namespace: ${JSON.stringify(peer)}`);
        for (const port of rule.ports ?? []) {
          const number = resolve(pod, port.port);
          from.set(number, (from.get(number) ?? new Set()).add(ns ?? JSON.stringify(peer)));
          if (number === sar && Object.keys(peer.podSelector?.matchLabels ?? {}).length === 0)
            problems.push(
              `${name}: the SAR port ${sar} let in from every pod of ${ns}, not the SAR service's`,
            );
        }
      }
    }
  for (const port of api)
    if ([...(from.get(port) ?? [])].join() !== GATEWAY_NAMESPACE)
      problems.push(
        `API port ${port} reached from ${[...(from.get(port) ?? [])]}, not ${GATEWAY_NAMESPACE} alone`,
      );
  if ([...(from.get(management) ?? [])].join() !== MONITORING_NAMESPACE)
    problems.push(
      `management port ${management} reached from ${[...(from.get(management) ?? [])]}, not ${MONITORING_NAMESPACE} alone`,
    );
  if (sar !== undefined && [...(from.get(sar) ?? [])].join() !== SAR_NAMESPACE)
    problems.push(`SAR port ${sar} reached from ${[...(from.get(sar) ?? [])]}, not ${SAR_NAMESPACE} alone`);
  for (const port of from.keys())
    if (!api.has(port) && port !== management && port !== sar)
      problems.push(
        `port ${port} let in, neither the Service's targetPort, the management port nor the SAR port`,
      );
  // The Job's and the CronJob's pods: nothing comes in.
  for (const other of pods(m).filter((p) => p.name !== pod.name))
    for (const policy of policiesOf(m, other))
      if ((policy.spec?.ingress?.length ?? 0) > 0)
        problems.push(`${other.name}: ${policy.metadata.name} lets in`);
  return problems;
}

/** What each kind of pod may reach, protocol/port: the example's stores, upstream, AWS, collector. */
const DNS = ['TCP/53', 'UDP/53'];
const EGRESS: Readonly<Record<string, readonly string[]>> = {
  Deployment: [...DNS, 'TCP/5432', 'TCP/6379', 'TCP/443', 'TCP/4318'],
  Job: [...DNS, 'TCP/5432'],
  CronJob: [...DNS, 'TCP/5432', 'TCP/443'],
};
const isKubeDns = (peer: Peer) =>
  namespaceName(peer.namespaceSelector) === 'kube-system' &&
  JSON.stringify(peer.podSelector) === JSON.stringify({ matchLabels: { 'k8s-app': 'kube-dns' } }) &&
  peer.ipBlock === undefined;

/** Every egress rule names where and on which ports; nothing goes anywhere. */
function checkEgress(m: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const { pod: service } = server(m);
  // Where the service reaches PostgreSQL: the Job and the CronJob reach the same database.
  const database = JSON.stringify(
    policiesOf(m, service)
      .flatMap((p) => p.spec?.egress ?? [])
      .find((r) => r.ports?.some((p) => p.port === 5432))?.to,
  );
  for (const pod of pods(m)) {
    const reached = new Set<string>();
    for (const policy of policiesOf(m, pod))
      for (const rule of policy.spec?.egress ?? []) {
        const at = `${pod.name} (${policy.metadata.name})`;
        // No exception: a rule without `to` reaches every address there is.
        if ((rule.to?.length ?? 0) === 0) problems.push(`${at}: an egress rule to anywhere`);
        if ((rule.ports?.length ?? 0) === 0) problems.push(`${at}: an egress rule on every port`);
        const ports = (rule.ports ?? []).map((p) => `${p.protocol ?? 'TCP'}/${p.port}`);
        for (const p of rule.ports ?? []) if (p.endPort !== undefined) problems.push(`${at}: a port range`);
        for (const port of ports) reached.add(port);
        for (const peer of rule.to ?? []) {
          const cidr = peer.ipBlock?.cidr;
          // Not the internet, nor half of it: a network of the operator's own.
          const prefix = Number(cidr?.split('/')[1] ?? 0);
          const widest = cidr?.includes(':') ? 16 : 8;
          if (cidr !== undefined && (prefix < widest || peer.namespaceSelector || peer.podSelector))
            problems.push(`${at}: ipBlock ${cidr}, wider than a network of one's own`);
          if (cidr === undefined && namespaceName(peer.namespaceSelector) === undefined)
            problems.push(`${at}: a peer in no one named namespace: ${JSON.stringify(peer)}`);
        }
        const dns = ports.some((p) => p.endsWith('/53'));
        if (dns && (ports.sort().join() !== DNS.join() || !(rule.to ?? []).every(isKubeDns)))
          problems.push(`${at}: DNS goes elsewhere than kube-system's kube-dns pods, or not on UDP and TCP`);
        if (ports.includes('TCP/5432') && JSON.stringify(rule.to) !== database)
          problems.push(`${at}: PostgreSQL at ${JSON.stringify(rule.to)}, the service's at ${database}`);
      }
    const expected = EGRESS[pod.kind] ?? [];
    if ([...reached].sort().join() !== [...expected].sort().join())
      problems.push(`${pod.name}: egress to ${[...reached].sort()}, expected ${[...expected].sort()}`);
  }
  // The collector the Deployment sends traces to, when tracing is on: its namespace and port.
  const env = new Map(service.spec.containers.flatMap((c) => (c.env ?? []).map((e) => [e.name, e.value])));
  if (env.get('OTEL_TRACES_EXPORTER') === 'otlp') {
    const url = new URL(env.get('OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://localhost:4318');
    const namespace = url.hostname.split('.')[1];
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const rules = policiesOf(m, service).flatMap((p) => p.spec?.egress ?? []);
    const reaches = rules.some(
      (r) =>
        (r.ports ?? []).some((p) => p.port === port) &&
        (r.to ?? []).some((peer) => namespaceName(peer.namespaceSelector) === namespace),
    );
    if (!reaches) problems.push(`no egress to the OTLP collector, namespace ${namespace}, port ${port}`);
  }
  return problems;
}

/**
 * Every Secret volume is 0440 or stricter (nothing for others), and its pod's fsGroup, the
 * group its files belong to, is the group of every container that mounts it.
 */
function checkSecretVolumes(m: readonly Manifest[]): string[] {
  const problems: string[] = [];
  for (const pod of pods(m)) {
    for (const volume of pod.spec.volumes ?? []) {
      const modes: (number | undefined)[] = [];
      if (volume.secret !== undefined) {
        modes.push(volume.secret.defaultMode);
        for (const item of volume.secret.items ?? []) if (item.mode !== undefined) modes.push(item.mode);
      }
      const projected = (volume.projected?.sources ?? []).filter((s) => s.secret !== undefined);
      if (projected.length > 0) {
        modes.push(volume.projected?.defaultMode);
        for (const s of projected)
          for (const item of s.secret?.items ?? []) if (item.mode !== undefined) modes.push(item.mode);
      }
      if (modes.length === 0) continue;
      const at = `${pod.name}, volume ${volume.name}`;
      for (const mode of modes) {
        // Kubernetes' default, when none is given, is 0644.
        if (mode === undefined) problems.push(`${at}: no defaultMode (0644, world-readable)`);
        else if ((mode & 0o007) !== 0 || mode > 0o777) problems.push(`${at}: mode 0${mode.toString(8)}`);
      }
      const fsGroup = pod.spec.securityContext?.fsGroup;
      if (fsGroup === undefined) problems.push(`${at}: no fsGroup, so its files are root's group`);
      for (const c of containersOf(pod.spec).filter((c) =>
        c.volumeMounts?.some((v) => v.name === volume.name),
      )) {
        const group = c.securityContext?.runAsGroup ?? pod.spec.securityContext?.runAsGroup;
        if (group !== fsGroup)
          problems.push(`${at}: container ${c.name} runs as group ${group}, fsGroup is ${fsGroup}`);
      }
    }
  }
  return problems;
}

/**
 * The Service and the PodDisruptionBudget count the service's own pods, and only them: a Job's
 * pod (the migration, the archive) carries the same `app` label, and a budget that counted it
 * would let a node drain take the last service pod while an archive runs.
 */
function checkWorkloadSelectors(manifests: readonly Manifest[]): string[] {
  const all = pods(manifests);
  const served = all.filter((p) => p.kind === 'Deployment');
  const problems: string[] = [];
  for (const { object } of manifests) {
    if (object.kind !== 'Service' && object.kind !== 'PodDisruptionBudget') continue;
    const given = (object.spec?.selector ?? {}) as Selector & Record<string, unknown>;
    const selector: Selector =
      'matchLabels' in given || 'matchExpressions' in given
        ? given
        : { matchLabels: given as unknown as Record<string, string> };
    const name = `${object.kind}/${object.metadata.name}`;
    for (const pod of served)
      if (!selects(selector, pod.labels)) problems.push(`${name} does not select ${pod.name}'s pods`);
    for (const pod of all.filter((p) => p.kind !== 'Deployment'))
      if (selects(selector, pod.labels)) problems.push(`${name} selects ${pod.name}'s pods too`);
  }
  return problems;
}

// ----------------------------------------------------------------------------------- the tests

const manifests = load();

describe('deploy/kubernetes: network policies and Secret volumes', () => {
  it('reads the manifests as Kubernetes does: YAML 1.1, so 0440 is octal', () => {
    expect(parse('m: 0440', YAML_AS_KUBERNETES).m).toBe(0o440);
    expect(manifests.map((x) => x.file)).toContain('network-policy.yaml');
    expect(pods(manifests).map((p) => p.kind)).toEqual(
      expect.arrayContaining(['Deployment', 'Job', 'CronJob']),
    );
  });

  it('shuts every pod of the manifests both ways and opens each with exactly one allow-list', () => {
    expect(checkCoverage(manifests)).toEqual([]);
  });

  it("opens the Deployment's container ports, the Service's targetPorts among them, and no other", () => {
    expect(checkIngressPorts(manifests)).toEqual([]);
  });

  it("lets the API in from the gateway's namespace only, the management port from monitoring's, nothing to the jobs", () => {
    expect(checkIngressSources(manifests)).toEqual([]);
  });

  it("opens the SAR door, a container port of its own, to the SAR service's pods alone", () => {
    const { pod } = server(manifests);
    expect(sarPort(pod)).toBe(8444);
    expect(checkIngressSources(manifests)).toEqual([]);
  });

  it('lets out only named places on named ports: DNS to kube-dns, the stores, upstream, AWS, the collector', () => {
    expect(checkEgress(manifests)).toEqual([]);
  });

  it("the Service and the PodDisruptionBudget select the Deployment's pods and no Job's", () => {
    expect(checkWorkloadSelectors(manifests)).toEqual([]);
  });

  it('mounts every Secret volume 0440 or stricter, readable through fsGroup, the containers’ group', () => {
    expect(checkSecretVolumes(manifests)).toEqual([]);
    const secretVolumes = pods(manifests).flatMap((p) => (p.spec.volumes ?? []).filter((v) => v.secret));
    expect(secretVolumes.length).toBeGreaterThanOrEqual(2);
  });
});

describe('the checks themselves: each names a broken copy of the manifests', () => {
  const object = (m: Manifest[], kind: string, name?: string) => {
    const found = m.find(
      (x) => x.object.kind === kind && (name === undefined || x.object.metadata.name === name),
    );
    if (found === undefined) throw new Error(`no ${kind} ${name ?? ''}`);
    return found.object;
  };
  const policy = (m: Manifest[], name: string) => object(m, 'NetworkPolicy', name).spec ?? {};
  const deployment = (m: Manifest[]) => object(m, 'Deployment').spec?.template as PodTemplate;
  const first = <T>(xs: T[] | undefined): T => xs?.[0] as T;
  const ingress = (m: Manifest[], i: number) => policy(m, 'case-read-service').ingress?.[i] as Rule;
  const egressOn = (m: Manifest[], name: string, port: number) =>
    policy(m, name).egress?.find((r) => r.ports?.some((p) => p.port === port)) as Rule;

  const BROKEN: readonly [string, (m: Manifest[]) => void, (m: Manifest[]) => string[], RegExp][] = [
    [
      'a policy with one policyType',
      (m) => {
        policy(m, 'case-read-service').policyTypes = ['Ingress'];
      },
      checkCoverage,
      /policyTypes/,
    ],
    [
      "the Deployment's pods relabelled",
      (m) => {
        deployment(m).metadata = { labels: { app: 'case-read-api' } };
      },
      checkCoverage,
      /Deployment\/case-read-service: no default deny/,
    ],
    [
      "the service's allow-list also selecting the jobs' pods",
      (m) => {
        delete policy(m, 'case-read-service').podSelector?.matchExpressions;
      },
      checkCoverage,
      /Job\/case-read-migrate-\S+: selected by 2 allow-lists/,
    ],
    [
      "the migrate policy's selector matching no pod",
      (m) => {
        policy(m, 'case-read-migrate').podSelector = { matchLabels: { step: 'migrations' } };
      },
      checkCoverage,
      /case-read-migrate: selects no pod/,
    ],
    [
      'a container port renamed',
      (m) => {
        const port = first(
          first(deployment(m).spec.containers).ports?.filter((p) => p.name === 'management'),
        );
        port.name = 'admin';
      },
      checkIngressPorts,
      /port management is no container port/,
    ],
    [
      'a container port renumbered',
      (m) => {
        first(first(deployment(m).spec.containers).ports).containerPort = 8444;
      },
      checkIngressPorts,
      /not the ports the image listens on/,
    ],
    [
      'an ingress port by a number that is no container port',
      (m) => {
        first(ingress(m, 0).ports).port = 443;
      },
      checkIngressPorts,
      /port 443 is no container port/,
    ],
    [
      'a container port left out of the policy',
      (m) => {
        policy(m, 'case-read-service').ingress?.splice(1, 1);
      },
      checkIngressPorts,
      /ingress opens ports 8443,8444, the Deployment's are 8443,9464,8444/,
    ],
    [
      "the SAR door's port not the one SAR_PORT names",
      (m) => {
        const sar = first(deployment(m).spec.containers).ports?.find((p) => p.name === 'sar');
        if (sar) sar.containerPort = 8445;
      },
      checkIngressPorts,
      /not the ports the image listens on/,
    ],
    [
      'the SAR door opened to the gateway',
      (m) => {
        ingress(m, 0).ports?.push({ port: 'sar', protocol: 'TCP' });
      },
      checkIngressSources,
      /SAR port 8444 reached from .*example-gateway/,
    ],
    [
      "the SAR door opened to every pod of the SAR service's namespace",
      (m) => {
        delete first(ingress(m, 2).from).podSelector;
      },
      checkIngressSources,
      /the SAR port 8444 let in from every pod of example-sar/,
    ],
    [
      "the SAR door behind the API's Service",
      (m) => {
        object(m, 'Service', 'case-read-service').spec?.ports?.push({
          name: 'sar',
          port: 8444,
          targetPort: 'sar',
        });
      },
      checkIngressSources,
      /the SAR port 8444 is behind the API's Service/,
    ],
    [
      "the Service's targetPort on no container port",
      (m) => {
        first(object(m, 'Service').spec?.ports).targetPort = 'http';
      },
      checkIngressPorts,
      /targetPort http is no container port/,
    ],
    [
      'the API opened to the monitoring namespace',
      (m) => {
        first(ingress(m, 0).from).namespaceSelector = {
          matchLabels: { [NAMESPACE_NAME]: MONITORING_NAMESPACE },
        };
      },
      checkIngressSources,
      /API port 8443 reached from example-monitoring/,
    ],
    [
      'the management port opened to the gateway by number',
      (m) => {
        ingress(m, 0).ports?.push({ port: 9464, protocol: 'TCP' });
      },
      checkIngressSources,
      /management port 9464 reached from .*example-gateway/,
    ],
    [
      'a third container port opened to the gateway',
      (m) => {
        first(deployment(m).spec.containers).ports?.push({ name: 'inspect', containerPort: 9229 });
        ingress(m, 0).ports?.push({ port: 'inspect', protocol: 'TCP' });
      },
      checkIngressSources,
      /port 9229 let in, neither/,
    ],
    [
      "the Service's targetPort moved to the management port",
      (m) => {
        first(object(m, 'Service').spec?.ports).targetPort = 'management';
      },
      checkIngressSources,
      /not a management port of its own/,
    ],
    [
      'an ingress rule from anywhere',
      (m) => {
        delete ingress(m, 1).from;
      },
      checkIngressSources,
      /an ingress rule from anywhere/,
    ],
    [
      'an ingress rule to every port',
      (m) => {
        delete ingress(m, 1).ports;
      },
      checkIngressSources,
      /an ingress rule to every port/,
    ],
    [
      'a source by pod label (every namespace) or address',
      (m) => {
        ingress(m, 1).from?.push({
          namespaceSelector: {},
          podSelector: { matchLabels: { app: 'prometheus' } },
        });
        ingress(m, 0).from?.push({ ipBlock: { cidr: '10.0.0.0/8' } });
      },
      checkIngressSources,
      /a source other than one namespace: {"namespaceSelector":{},/,
    ],
    [
      'the migrate Job let in',
      (m) => {
        policy(m, 'case-read-migrate').ingress = [{ from: [{ podSelector: {} }] }];
      },
      checkIngressSources,
      /Job\/case-read-migrate-\S+: case-read-migrate lets in/,
    ],
    [
      'an egress rule to anywhere',
      (m) => {
        policy(m, 'case-read-service').egress?.push({ ports: [{ port: 443, protocol: 'TCP' }] });
      },
      checkEgress,
      /an egress rule to anywhere/,
    ],
    [
      'an egress rule to 0.0.0.0/0',
      (m) => {
        first(egressOn(m, 'case-read-service', 443).to).ipBlock = { cidr: '0.0.0.0/0' };
        egressOn(m, 'case-read-migrate', 5432).to?.push({ ipBlock: { cidr: '128.0.0.0/1' } });
      },
      checkEgress,
      /ipBlock 0\.0\.0\.0\/0, wider[\s\S]*ipBlock 128\.0\.0\.0\/1, wider/,
    ],
    [
      'an egress rule on every port',
      (m) => {
        delete egressOn(m, 'case-read-audit-archive', 443).ports;
      },
      checkEgress,
      /CronJob\/case-read-audit-archive \(case-read-audit-archive\): an egress rule on every port/,
    ],
    [
      'DNS to every pod of kube-system',
      (m) => {
        delete first(egressOn(m, 'case-read-service', 53).to).podSelector;
      },
      checkEgress,
      /DNS goes elsewhere/,
    ],
    [
      'DNS over UDP only',
      (m) => {
        egressOn(m, 'case-read-migrate', 53).ports?.pop();
      },
      checkEgress,
      /Job\/\S+ \(case-read-migrate\): DNS goes elsewhere/,
    ],
    [
      'the migrate Job let out to Redis',
      (m) => {
        egressOn(m, 'case-read-migrate', 5432).ports?.push({ port: 6379, protocol: 'TCP' });
      },
      checkEgress,
      /Job\/\S+: egress to TCP\/53,TCP\/5432,TCP\/6379,UDP\/53, expected TCP\/53,TCP\/5432,UDP\/53$/m,
    ],
    [
      'the service without Redis',
      (m) => {
        const rules = policy(m, 'case-read-service').egress ?? [];
        rules.splice(rules.indexOf(egressOn(m, 'case-read-service', 6379)), 1);
      },
      checkEgress,
      /Deployment\/\S+: egress to .*, expected .*TCP\/6379/,
    ],
    [
      'a database elsewhere in one policy',
      (m) => {
        first(egressOn(m, 'case-read-audit-archive', 5432).to).ipBlock = { cidr: '192.0.2.128/27' };
      },
      checkEgress,
      /CronJob\/\S+ \(case-read-audit-archive\): PostgreSQL at .*192\.0\.2\.128\/27.*, the service's at .*192\.0\.2\.0\/27/,
    ],
    [
      'the collector moved to another namespace',
      (m) => {
        const env = first(deployment(m).spec.containers).env ?? [];
        const otlp = env.find((e) => e.name === 'OTEL_EXPORTER_OTLP_ENDPOINT');
        if (otlp) otlp.value = 'http://otel-collector.tracing:4318';
      },
      checkEgress,
      /no egress to the OTLP collector, namespace tracing, port 4318/,
    ],
    [
      'a Secret volume 0644',
      (m) => {
        const tls = deployment(m).spec.volumes?.find((v) => v.name === 'tls');
        if (tls?.secret) tls.secret.defaultMode = 0o644;
      },
      checkSecretVolumes,
      /volume tls: mode 0644/,
    ],
    [
      'a Secret volume with no defaultMode',
      (m) => {
        const key = (object(m, 'CronJob').spec?.jobTemplate?.spec.template.spec.volumes ?? []).find(
          (v) => v.name === 'audit-key',
        );
        delete key?.secret?.defaultMode;
      },
      checkSecretVolumes,
      /volume audit-key: no defaultMode/,
    ],
    [
      'a projected Secret 0444',
      (m) => {
        deployment(m).spec.volumes?.push({
          name: 'more',
          projected: { defaultMode: 0o444, sources: [{ secret: { name: 'x' } }] },
        });
      },
      checkSecretVolumes,
      /volume more: mode 0444/,
    ],
    [
      'a pod without fsGroup',
      (m) => {
        delete deployment(m).spec.securityContext?.fsGroup;
      },
      checkSecretVolumes,
      /volume tls: no fsGroup/,
    ],
    [
      'a container in a group other than fsGroup',
      (m) => {
        const c = first(deployment(m).spec.containers);
        c.securityContext = { ...c.securityContext, runAsGroup: 2000 };
      },
      checkSecretVolumes,
      /container case-read-service runs as group 2000, fsGroup is 1000/,
    ],
  ];

  it.each(BROKEN)('%s', (_, breakIt, check, named) => {
    const copy = structuredClone(manifests);
    expect(check(copy)).toEqual([]);
    breakIt(copy);
    expect(check(copy).join('\n')).toMatch(named);
  });
});
