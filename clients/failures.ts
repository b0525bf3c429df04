/**
 * How the typed Temporal clients classify SDK failures: by the SDK's failure types and the
 * ApplicationFailure details a workflow attaches, never by message text. Shared by every
 * capability's client (sessions, intents).
 */
import {
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  isGrpcServiceError,
} from '@temporalio/client';
import { DomainError } from '../lib/domain/errors';

/** The workflow's own refusal (an ApplicationFailure raised from a DomainError), if that is what failed. */
export function domainErrorOf(err: unknown): DomainError | undefined {
  return err instanceof WorkflowUpdateFailedError ? DomainError.fromFailure(err.cause) : undefined;
}

/**
 * The workflow is not there to take the update: not found, completed, or closing (the
 * server fails an update the workflow did not finish before completing; that failure is
 * not one of ours).
 */
export function workflowGone(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  return err instanceof WorkflowUpdateFailedError && DomainError.fromFailure(err.cause) === undefined;
}

export function isAlreadyStarted(err: unknown): boolean {
  return err instanceof WorkflowExecutionAlreadyStartedError || (err as { cause?: unknown })?.cause instanceof WorkflowExecutionAlreadyStartedError;
}

/** gRPC DEADLINE_EXCEEDED (status 4) anywhere in the error's cause chain. */
export function isDeadline(err: unknown): boolean {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    if (isGrpcServiceError(e) && e.code === 4) return true;
    if (e instanceof ServiceError && (e.cause as { code?: unknown } | undefined)?.code === 4) return true;
  }
  return false;
}

/** The gRPC status (code and details) anywhere in the error's cause chain. */
export function grpcStatusOf(err: unknown): { code: number; details: string } | undefined {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    if (isGrpcServiceError(e)) return { code: e.code, details: e.details || e.message };
  }
  return undefined;
}
