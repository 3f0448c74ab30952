// Agent ops: filled in once spec/schemas/ops/agent.json lands.
