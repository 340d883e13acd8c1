/**
 * The ports `npm start` listens on. The AWS edge sits at a fixed port next to
 * the front door (PORT + 1), so tools outside the process (the AWS CLI, SAM's
 * env.json) can reach it. With PORT=0 (any free port: tests, the bench) the
 * edge takes any free port too: PORT + 1 would be port 1 for every such
 * process, and two of them on one machine collided on it (EADDRINUSE).
 */
export function frontDoorPort(env: NodeJS.ProcessEnv): number {
  return Number(env.PORT ?? 3000);
}

export function edgePort(env: NodeJS.ProcessEnv): number {
  if (env.AWS_EDGE_PORT !== undefined) return Number(env.AWS_EDGE_PORT);
  const port = frontDoorPort(env);
  return port === 0 ? 0 : port + 1;
}
