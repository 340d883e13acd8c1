import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Listens on host:port (0 = any free port) and resolves with the port bound. */
export function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
