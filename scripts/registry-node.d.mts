/** The directory of a Node line's pinned release from the npm registry (scripts/registry-node.sh). */
export declare function registryNode(line: '22' | '24' | '26'): string;
