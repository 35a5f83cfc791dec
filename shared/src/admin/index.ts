export * from './bearer.js';
export * from './errors.js';
