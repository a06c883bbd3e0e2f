/**
 * Module declarations for the stylesheets the entry imports: esbuild bundles them into
 * dashboard.css; to TypeScript they are side-effect-only modules.
 */
declare module '*.css';
