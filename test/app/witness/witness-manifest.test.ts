import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { readWitnessSettings, WITNESS_VARIABLES } from '../../../src/app/composition/witness.js';
import { ROOT } from '../../support/cli.js';

/**
 * deploy/kubernetes/witness/witness.yaml, the example for the body that runs a witness, against
 * what `witness serve` reads: it runs `witness serve`, sets only variables the witness reads
 * (all it needs), runs as non-root on a read-only root file system, mounts its Secrets 0440
 * through fsGroup, and probes the path the witness answers. (It sits in a folder of its own:
 * the service's manifests beside it are checked as one deployment by test/deploy.)
 */

interface Container {
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  ports?: { name: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path: string; port: string; scheme?: string } };
  livenessProbe?: { httpGet?: { path: string; port: string; scheme?: string } };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
}
interface Manifest {
  kind: string;
  spec?: {
    template?: {
      spec: {
        securityContext?: { runAsNonRoot?: boolean; runAsGroup?: number; fsGroup?: number };
        containers: Container[];
        volumes?: { secret?: { defaultMode?: number } }[];
      };
    };
    ports?: { targetPort?: string }[];
  };
}

const manifests = parseAllDocuments(
  readFileSync(join(ROOT, 'deploy/kubernetes/witness/witness.yaml'), 'utf8'),
  {
    version: '1.1',
  },
).map((doc) => doc.toJS() as Manifest);
const deployment = manifests.find((m) => m.kind === 'Deployment');
const pod = deployment?.spec?.template?.spec;
const container = pod?.containers[0] as Container;

describe('deploy/kubernetes/witness/witness.yaml', () => {
  it('runs `witness serve` with variables the witness reads, every one it needs among them', () => {
    expect(container.args).toEqual(['witness', 'serve']);
    const names = (container.env ?? []).map((e) => e.name);
    expect(
      names.filter((n) => n !== 'NODE_ENV' && !(WITNESS_VARIABLES as readonly string[]).includes(n)),
    ).toEqual([]);
    // What the witness would make of them, the Secret's URL given a value: it takes them.
    const env = Object.fromEntries(
      (container.env ?? []).map((e) => [
        e.name,
        e.value ?? 'postgres://w@db.example.org/w?sslmode=verify-full&sslrootcert=ca.pem',
      ]),
    );
    expect(readWitnessSettings(env)).toMatchObject({ host: '0.0.0.0', port: 8443, tls: expect.anything() });
    expect(container.ports?.map((p) => p.containerPort)).toEqual([8443]);
  });

  it('is non-root, read-only, its Secrets 0440 through fsGroup, probed on /health over HTTPS', () => {
    expect(pod?.securityContext?.runAsNonRoot).toBe(true);
    expect(pod?.securityContext?.fsGroup).toBe(pod?.securityContext?.runAsGroup);
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    const modes = (pod?.volumes ?? []).flatMap((v) => (v.secret ? [v.secret.defaultMode] : []));
    expect(modes.length).toBeGreaterThanOrEqual(2);
    for (const mode of modes) expect(mode).toBe(0o440);
    for (const probe of [container.readinessProbe, container.livenessProbe])
      expect(probe?.httpGet).toEqual({ path: '/health', port: 'https', scheme: 'HTTPS' });
    expect(manifests.find((m) => m.kind === 'Service')?.spec?.ports?.[0]?.targetPort).toBe('https');
  });
});
