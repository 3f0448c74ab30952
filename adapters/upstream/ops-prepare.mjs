// Preparation ops: filled in once spec/schemas/ops/preparation.json lands.
