/**
 * Connects a FaultPlan (faults.ts) to the stack: the edge's per-call hook
 * (which function called, by the principal its access key maps to) and the
 * wrapper around every invocation (a trigger's or the Lambda Invoke API's).
 */
import type { EdgeFaultAction } from "./aws-edge";
import type { DeployedFunction } from "./deploy/deploy";
import type { AroundInvoke } from "./deploy/rest-routes";
import type { FaultPlan } from "./faults";
import type { TaskFault } from "./step-functions";

export type { FaultPlan } from "./faults";

export function edgeFaults(
  plan: FaultPlan,
  byName: (name: string) => DeployedFunction | undefined,
  keyOf: (fn: DeployedFunction) => string | undefined,
  failExecution: (name: string, fault: TaskFault) => boolean,
): (call: { service: string; action: string; principalArn: string; body: Buffer }) => EdgeFaultAction | undefined {
  return (call) => {
    // `arn:aws:sts::<account>:assumed-role/<role>/<function name>`
    const fn = byName(call.principalArn.slice(call.principalArn.lastIndexOf("/") + 1));
    if (!fn) return undefined;
    const fault = plan.edgeFault({ service: call.service, action: call.action, caller: keyOf(fn), body: call.body });
    if (!fault) return undefined;
    const kill = (kind: "crash" | "timeout") => async () => void (await fn.pool.killRunning(kind));
    if (fault.kind === "refuse") return { refuse: fault.error };
    if (fault.kind === "kill-before") return { before: kill("crash") };
    if (fault.kind === "execution-after") return { after: async () => void failExecution(fault.executionName, fault.fault) };
    return { after: kill(fault.kind === "timeout-after" ? "timeout" : "crash"), callerDies: true };
  };
}

export function invokeFaults(plan: FaultPlan | undefined, keyOf: Record<string, string>, inner: AroundInvoke | undefined): AroundInvoke | undefined {
  if (!plan) return inner;
  return (fn, invoke, event) => {
    const refused = plan.invokeFault(keyOf[fn.logicalId] ?? fn.logicalId, () => (typeof event === "string" ? event : (JSON.stringify(event) ?? "")));
    if (refused) return Promise.reject(refused);
    return inner ? inner(fn, invoke, event) : invoke();
  };
}
