// The pinned Node releases the project is tested on, from the npm registry (scripts/registry-node.sh).
export { registryNode } from '../../scripts/registry-node.mjs';
