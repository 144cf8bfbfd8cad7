#include "autoconfig.h"
#include "demo.h"

#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "buf.h"
#include "fsx.h"
#include "gitlib.h"
#include "i18n.h"
#include "paths.h"

static const char cart_py[] =
	"\"\"\"A tiny shopping cart.\"\"\"\n"
	"\n"
	"\n"
	"class Cart:\n"
	"    def __init__(self):\n"
	"        self.items = []\n"
	"\n"
	"    def add(self, name, price, quantity=1):\n"
	"        self.items.append((name, price, quantity))\n"
	"\n"
	"    def total(self):\n"
	"        return sum(price for _name, price, _quantity in self.items)\n"
	"\n"
	"    def discounted_total(self, percent):\n"
	"        return round(self.total() * (100 - percent) / 100, 2)\n";

static const char test_cart_py[] =
	"import unittest\n"
	"\n"
	"from cart import Cart\n"
	"\n"
	"\n"
	"class CartTest(unittest.TestCase):\n"
	"    def test_empty(self):\n"
	"        self.assertEqual(Cart().total(), 0)\n"
	"\n"
	"    def test_total(self):\n"
	"        cart = Cart()\n"
	"        cart.add(\"apple\", 0.5, 4)\n"
	"        cart.add(\"pear\", 1.25)\n"
	"        self.assertEqual(cart.total(), 3.25)\n"
	"\n"
	"    def test_discount_keeps_cents(self):\n"
	"        cart = Cart()\n"
	"        cart.add(\"book\", 12.99)\n"
	"        self.assertEqual(cart.discounted_total(10), 11.69)\n"
	"\n"
	"\n"
	"if __name__ == \"__main__\":\n"
	"    unittest.main()\n";

static const char readme_md[] =
	"# demo\n\nA tiny shopping cart for the paddock demo. Run the tests with\n"
	"`python3 -m unittest -q`.\n";

/* The scripted agents talk like an agent would and edit with sed; they run
 * inside the sandbox, where they see only the workspace. */
static const char fix_sh[] =
	"#!/bin/sh\n"
	"# demo-fixer: reads the task, finds the bug, fixes it, commits; in a\n"
	"# later round it answers the reviewer's notes.\n"
	"set -e\n"
	"if [ \"${PADDOCK_ROUND:-1}\" -gt 1 ]; then\n"
	"  echo \"demo-fixer: round $PADDOCK_ROUND; the reviewer says: $(head -c 200 \"$PADDOCK_PROMPT_FILE\")\"\n"
	"  sleep 1\n"
	"  printf '\\n# Reviewed in round %s.\\n' \"$PADDOCK_ROUND\" >>cart.py\n"
	"  git commit -qam \"Address the review notes (round $PADDOCK_ROUND)\"\n"
	"  echo \"Addressed the reviewer's notes in round $PADDOCK_ROUND.\" >\"$PADDOCK_SUMMARY_FILE\"\n"
	"  exit 0\n"
	"fi\n"
	"echo \"demo-fixer: task: $(head -c 200 \"$PADDOCK_PROMPT_FILE\")\"\n"
	"echo 'demo-fixer: running the tests to see what fails'\n"
	"python3 -m unittest -q 2>&1 | tail -n 4 || true\n"
	"sleep 1\n"
	"echo 'demo-fixer: Cart.total() sums prices but ignores the quantity; fixing it'\n"
	/* The fix-bug recipe asks for a regression test first. */
	"if grep -q 'add a test that fails because of the bug' \"$PADDOCK_PROMPT_FILE\"; then\n"
	"  echo 'demo-fixer: first a regression test that counts the quantity'\n"
	"  printf '\\n\\nclass QuantityTest(unittest.TestCase):\\n"
	"    def test_quantity_counts(self):\\n"
	"        cart = Cart()\\n"
	"        cart.add(\"pen\", 2, 3)\\n"
	"        self.assertEqual(cart.total(), 6)\\n' >>test_cart.py\n"
	"  git add test_cart.py\n"
	"fi\n"
	"sed -i 's/return sum(price for _name, price, _quantity in self.items)/"
	"return sum(price * quantity for _name, price, quantity in self.items)/' cart.py\n"
	"git add cart.py\n"
	"git commit -q -m 'Count quantities in Cart.total'\n"
	"sleep 1\n"
	"echo 'demo-fixer: done: Cart.total() now multiplies each price by its quantity.'\n"
	"echo 'Cart.total() ignored the quantity of each item; it now multiplies each price "
	"by its quantity, and the three tests pass.' >\"$PADDOCK_SUMMARY_FILE\"\n";

static const char hasty_sh[] =
	"#!/bin/sh\n"
	"# demo-hasty: fixes the total, then rounds too eagerly and breaks a test.\n"
	"set -e\n"
	"echo \"demo-hasty: task: $(head -c 200 \"$PADDOCK_PROMPT_FILE\")\"\n"
	"sed -i 's/return sum(price for _name, price, _quantity in self.items)/"
	"return sum(price * quantity for _name, price, quantity in self.items)/' cart.py\n"
	"sleep 1\n"
	"echo 'demo-hasty: rounding discounted totals to whole amounts'\n"
	"sed -i 's/return round(self.total() \\* (100 - percent) \\/ 100, 2)/"
	"return round(self.total() * (100 - percent) \\/ 100)/' cart.py\n"
	"git commit -q -am 'Round totals'\n"
	"echo 'demo-hasty: done.'\n";

static int git_fail(struct err *e, const char *what)
{
	const git_error *ge = git_error_last();
	return err_set(e, _("demo: %s: %s"), what, ge && ge->message ? ge->message : "?");
}

static int add_blob(git_repository *r, git_treebuilder *tb, const char *name,
                    const char *content, struct err *e)
{
	git_oid oid;
	if (git_blob_create_from_buffer(&oid, r, content, strlen(content)) < 0 ||
	    git_treebuilder_insert(NULL, tb, name, &oid, GIT_FILEMODE_BLOB) < 0)
		return git_fail(e, name);
	return 0;
}

/* The demo repo is made with libgit2 straight into a bare repository: no
 * working tree, no hooks, nothing of the user's git configuration. */
static int make_repo(const char *path, struct err *e)
{
	git_repository *r = NULL;
	git_treebuilder *tb = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	int rc = -1;
	git_oid tree_oid, commit_oid;
	if (git_repository_init(&r, path, 1) < 0) {
		git_fail(e, path);
		goto out;
	}
	if (git_treebuilder_new(&tb, r, NULL) < 0) {
		git_fail(e, "tree");
		goto out;
	}
	if (add_blob(r, tb, ".gitignore", "__pycache__/\n", e) < 0 ||
	    add_blob(r, tb, "README.md", readme_md, e) < 0 ||
	    add_blob(r, tb, "cart.py", cart_py, e) < 0 ||
	    add_blob(r, tb, "test_cart.py", test_cart_py, e) < 0)
		goto out;
	if (git_treebuilder_write(&tree_oid, tb) < 0 ||
	    git_tree_lookup(&tree, r, &tree_oid) < 0 ||
	    git_signature_new(&sig, "paddock demo", "demo@paddock.invalid",
	                      1764460800, 0) < 0 ||
	    git_commit_create(&commit_oid, r, "refs/heads/main", sig, sig, NULL,
	                      "A tiny shopping cart\n", tree, 0, NULL) < 0 ||
	    git_repository_set_head(r, "refs/heads/main") < 0) {
		git_fail(e, "commit");
		goto out;
	}
	rc = 0;
out:
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	git_repository_free(r);
	return rc;
}

int demo_prepare(const char *data_dir, struct config *cfg, struct err *e)
{
	char *dir = paths_demo_dir(data_dir);
	char *repo = paths_join(dir, "demo.git", NULL);
	char *agents = paths_join(dir, "agents", NULL);
	char *fix = paths_join(agents, "fix.sh", NULL);
	char *hasty = paths_join(agents, "hasty.sh", NULL);
	int rc = -1;
	struct stat st;
	gitlib_init();
	if (fsx_mkdir_p(agents, 0755, e) < 0)
		goto out;
	/* The same demo repo (and so the same template) is reused by later
	 * runs: a second demo starts in milliseconds. */
	if (stat(repo, &st) < 0 && make_repo(repo, e) < 0)
		goto out;
	if (fsx_write_file(fix, fix_sh, strlen(fix_sh), 0755, e) < 0 ||
	    fsx_write_file(hasty, hasty_sh, strlen(hasty_sh), 0755, e) < 0)
		goto out;
	demo_config_add(data_dir, cfg);
	rc = 0;
out:
	free(dir);
	free(repo);
	free(agents);
	free(fix);
	free(hasty);
	return rc;
}

void demo_config_add(const char *data_dir, struct config *cfg)
{
	char *dir = paths_demo_dir(data_dir);
	char *repo = paths_join(dir, "demo.git", NULL);
	char *fix = paths_join(dir, "agents", "fix.sh", NULL);
	char *hasty = paths_join(dir, "agents", "hasty.sh", NULL);
	struct stat st;
	const struct repo_conf *mine = config_find_repo(cfg, "demo");
	if (stat(repo, &st) == 0 && (!mine || !strcmp(mine->url, repo))) {
		struct repo_conf rc_demo = {
			.name = "demo",
			.url = repo,
			.branch = "main",
			.test = "python3 -m unittest -q",
		};
		config_add_repo(cfg, &rc_demo);
		char *cmd = xasprintf("/bin/sh %s", fix);
		config_add_agent(cfg, "demo-fixer", cmd);
		free(cmd);
		cmd = xasprintf("/bin/sh %s", hasty);
		config_add_agent(cfg, "demo-hasty", cmd);
		free(cmd);
	}
	free(dir);
	free(repo);
	free(fix);
	free(hasty);
}
