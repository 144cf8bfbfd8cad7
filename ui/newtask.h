/* newtask: the dashboard's new-task form.  It asks, one question at a
 * time at the bottom, for a recipe (Enter: none), the recipe's inputs, the
 * repo, the agent and the text (optional with a recipe: it is added to the
 * recipe's prompt), and queues the task through submit.h, as `paddock add`
 * does.  Each answer is checked when it is given, and a wrong one is
 * asked again with the reason and what was typed (dash_ask_again); Tab
 * completes recipes, repos and agents.  The questions run on the
 * dashboard's loop; newtask_open returns at once, and added(d, arg) is
 * called once a task was queued. */
#ifndef PADDOCK_UI_NEWTASK_H
#define PADDOCK_UI_NEWTASK_H

struct dash;

#define RECIPE_INPUTS_FORM_MAX 32

void newtask_open(struct dash *d, void (*added)(struct dash *d, void *arg), void *arg);

#endif
