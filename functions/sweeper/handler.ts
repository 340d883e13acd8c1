// Filled in by the foundation work; placeholder so CDK can resolve the entry.
export const handler = async (): Promise<void> => {
  throw new Error("not implemented yet");
};
