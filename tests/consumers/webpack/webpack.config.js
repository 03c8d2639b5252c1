import { fileURLToPath } from 'node:url';

export default {
  mode: 'production',
  entry: './src/main.js',
  output: { path: fileURLToPath(new URL('dist', import.meta.url)), filename: 'main.js' },
};
