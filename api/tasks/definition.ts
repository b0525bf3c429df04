/** A whole task definition from a request body, checked: lib/task-definition.ts (the worker's follow-up tasks use it too). */
export { defaultAgentProblem, definitionOf, type DefinitionDefaults } from '../../lib/task-definition';
