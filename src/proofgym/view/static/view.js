// proofgym view: the only script, loaded as a file (the Content-Security-Policy allows no inline script).
// It adds "expand all / collapse all" for the <details> sections; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var button = document.querySelector("button.toggle-all");
  var sections = document.querySelectorAll("details");
  if (!button || sections.length === 0) {
    return;
  }
  button.hidden = false;
  button.addEventListener("click", function () {
    var open = button.textContent === "expand all";
    sections.forEach(function (d) { d.open = open; });
    button.textContent = open ? "collapse all" : "expand all";
  });
});
