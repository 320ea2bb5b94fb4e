(function(){
"use strict";
var live=document.getElementById("live"),timers=[],busy=false;
function say(t){live.textContent="";setTimeout(function(){live.textContent=t},60)}
function fmt(s){s=Math.max(0,s);var h=Math.floor(s/3600),m=Math.floor(s%3600/60),x=s%60;return(h?h+":"+(m<10?"0":""):"")+m+":"+(x<10?"0":"")+x}
function main(){return document.getElementById("checkout")}
function init(){
timers.forEach(function(t){clearInterval(t);clearTimeout(t)});timers=[];
var m=main();if(!m)return;
if(navigator.clipboard)m.querySelectorAll("[data-copy]").forEach(function(b){b.hidden=false;b.addEventListener("click",function(){
navigator.clipboard.writeText(b.getAttribute("data-copy")).then(function(){var o=b.textContent;b.textContent="Copied";say("Copied to the clipboard");setTimeout(function(){b.textContent=o},1500)},function(){say("Could not copy; select the text instead")})})});
m.querySelectorAll("[data-left]").forEach(function(c){
var end=Date.now()+1000*Number(c.getAttribute("data-left")),done=false;
function tick(){var s=Math.round((end-Date.now())/1000);c.textContent=fmt(s);if(s<=0&&!done){done=true;poll()}}
tick();timers.push(setInterval(tick,1000))});
var r=m.getAttribute("data-redirect");
if(r)timers.push(setTimeout(function(){location.assign(r)},Number(m.getAttribute("data-delay"))||2000));
}
function swap(m){
return fetch(m.getAttribute("data-page"),{cache:"no-store",credentials:"same-origin"}).then(function(r){return r.text()}).then(function(h){
function cut(a,b){var i=h.indexOf(a),j=h.indexOf(b,i);return i<0||j<0?"":h.slice(i,j+b.length)}
var d=new DOMParser().parseFromString(cut("<title","</title>")+cut("<main","</main>"),"text/html"),n=d.getElementById("checkout");if(!n)return;
n=document.adoptNode(n);m.replaceWith(n);document.title=d.title;
var h1=n.querySelector("h1"),st=n.querySelector(".status");
say((h1?h1.textContent:"")+(st?". "+st.textContent:""));init()})}
function poll(){
var m=main(),u=m&&m.getAttribute("data-poll");if(!u||busy)return;busy=true;
fetch(u,{cache:"no-store",headers:{accept:"application/json"}}).then(function(r){return r.ok?r.json():null}).then(function(s){
if(s&&(s.status!==m.getAttribute("data-status")||s.updatedAt!==m.getAttribute("data-updated")))return swap(m)}).catch(function(){}).then(function(){busy=false})}
init();setInterval(poll,2000);
})();
