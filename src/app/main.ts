/**
 * `npm start`: the Forge App as a Node server, configured from the environment and `.env`
 * (launch.ts lists the variables). Without App credentials it serves the setup page first.
 */
import { launchApp, LaunchError } from "./launch.js";

try {
  const server = await launchApp({
    env: process.env,
    cwd: process.cwd(),
    log: (line) => console.log(line),
    onSetup: (url) => console.log(`Forge is not registered on GitHub yet. Open this link to set it up:\n\n  ${url}\n`),
  });
  console.log(`Forge App listening: webhooks at ${server.webhookUrl}`);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void server.close().then(() => process.exit(0)));
} catch (e) {
  const inUse = (e as NodeJS.ErrnoException).code === "EADDRINUSE";
  if (!(e instanceof LaunchError) && !inUse) throw e;
  console.error(inUse ? `forge: port ${process.env.PORT ?? 3000} is in use (PORT)` : (e as Error).message);
  process.exit(2);
}
