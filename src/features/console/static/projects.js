// Projects: the list (searched by name or id) and the form that creates one.

import { api } from "./api.js";
import { badge, h, table, when, xlm } from "./dom.js";
import { field, form } from "./forms.js";

export async function projects(view) {
  const search = h("input", { type: "search", placeholder: "name or id" });
  const name = h("input", { required: true, maxlength: 200 });
  const list = h("div");
  let all = [];
  const create = async () => {
    const p = await api("POST", "/v1/admin/projects", { name: name.value });
    location.hash = `#/projects/${p.id}`;
  };
  const creating = h(
    "div",
    { class: "card", hidden: true },
    h("h2", null, "New project"),
    form(create, field("Project name", name, "project-name"), h("button", { type: "submit" }, "Create project")),
  );
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const shown = all.filter((p) => !q || p.name.toLowerCase().includes(q) || p.id.toLowerCase().includes(q));
    list.replaceChildren(
      table(
        [
          ["Name", (p) => h("a", { href: `#/projects/${p.id}` }, p.name)],
          ["Status", (p) => badge(p.status)],
          ["Credits", (p) => xlm(p.creditBalance), "num"],
          ["Created", (p) => when(p.createdAt)],
        ],
        shown,
        q ? "No project matches." : "No projects yet.",
      ),
    );
  };
  search.addEventListener("input", draw);
  view.prepend(h("h1", null, "Projects"));
  view.append(
    h(
      "div",
      { class: "row" },
      field("Search projects", search, "project-search"),
      h(
        "button",
        {
          type: "button",
          onclick: () => {
            creating.hidden = false;
            name.focus();
          },
        },
        "New project",
      ),
    ),
    creating,
    list,
  );
  all = (await api("GET", "/v1/admin/projects")).projects;
  draw();
}
