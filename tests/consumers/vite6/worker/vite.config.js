// Vite 5, 6 and 7 bundle workers as IIFE by default, which cannot hold the lazily imported
// chunk that carries the package's .wasm: `vite build` fails without this line.
export default { worker: { format: 'es' } };
