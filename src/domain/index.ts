export * from './crn.js';
export * from './errors.js';
export type * from './needs.js';
export type * from './types.js';
export * from './use-cases/get-case.js';
export * from './use-cases/get-community-manager.js';
export * from './use-cases/get-home-office-interest.js';
