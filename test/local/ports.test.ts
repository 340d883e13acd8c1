import { describe, expect, it } from "vitest";
import { edgePort, frontDoorPort } from "../../infra/local/ports";

describe("npm start's ports", () => {
  it("puts the AWS edge next to the front door by default", () => {
    expect(frontDoorPort({})).toBe(3000);
    expect(edgePort({})).toBe(3001);
    expect(edgePort({ PORT: "8080" })).toBe(8081);
  });

  it("gives the edge any free port when the front door takes any free port (not port 1 for every such process)", () => {
    expect(frontDoorPort({ PORT: "0" })).toBe(0);
    expect(edgePort({ PORT: "0" })).toBe(0);
  });

  it("takes AWS_EDGE_PORT as given", () => {
    expect(edgePort({ PORT: "0", AWS_EDGE_PORT: "4566" })).toBe(4566);
  });
});
