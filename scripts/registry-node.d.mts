/**
 * The directory of a Node line's pinned release from the npm registry (scripts/registry-node.sh):
 * 22, 24 and 26 are supported; 20 (ended) is pinned only to test its refusal.
 */
export declare function registryNode(line: '20' | '22' | '24' | '26'): string;
