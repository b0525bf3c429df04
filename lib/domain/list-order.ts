/** The orders the lists take (`order=`): by creation time, newest first by default. */
export const LIST_ORDERS = ['newest', 'oldest'] as const;
export type ListOrder = (typeof LIST_ORDERS)[number];
/** Tasks also list by task id, the order their list had before it took an order. */
export const TASK_LIST_ORDERS = [...LIST_ORDERS, 'id'] as const;
export type TaskListOrder = (typeof TASK_LIST_ORDERS)[number];
export const DEFAULT_LIST_ORDER: ListOrder = 'newest';
